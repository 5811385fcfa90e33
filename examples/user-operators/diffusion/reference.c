/* The reference of diffusion: one step of the 5-point stencil on the host, in plain C. varex calls
 *   int diffuse_reference(const float* u, float* next, int64_t width, int64_t rows)
 * from the shared library built by
 *   cc -O2 -shared -fPIC reference.c -o reference.so
 * and compares `next` with each variant's within the output's tolerance (floats may round differently on
 * a device: a fused multiply-add, say). It returns 0 when it wrote `next`. */
#include <stdint.h>

int diffuse_reference(const float* u, float* next, int64_t width, int64_t rows) {
  for (int64_t y = 0; y < rows; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      const int64_t i = y * width + x;
      if (x == 0 || y == 0 || x == width - 1 || y == rows - 1) {
        next[i] = u[i];
      } else {
        const float around = u[i - width] + u[i + width] + u[i - 1] + u[i + 1];
        next[i] = u[i] + 0.2f * (around - 4.0f * u[i]);
      }
    }
  }
  return 0;
}
