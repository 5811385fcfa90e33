// One step of heat diffusion on a grid of `rows` x `width` floats: an explicit 5-point stencil (after Kernel
// Tuner's diffusion tutorial, written anew). An inner cell becomes u + K * (its four neighbours' sum - 4u);
// the border keeps its values.
//
// A work-group computes a tile of block_x columns by block_y * tile_y rows; each work-item computes tile_y
// cells, block_y rows apart. With use_local the work-group first copies its tile and the cells around it
// into local memory, and every cell reads its neighbours there instead of in global memory.
#include "common/portable.h"

#define K 0.2f

KERNEL void diffuse(CONSTANT_PTR float* RESTRICT u, GLOBAL float* RESTRICT next, uint width, uint rows) {
  const uint groups_x = (width + block_x - 1) / block_x;
  const uint x0 = (group_id() % groups_x) * block_x;
  const uint y0 = (group_id() / groups_x) * (block_y * tile_y);
  const uint lx = lid() % block_x;
  const uint ly = lid() / block_x;
  const uint x = x0 + lx;
#if use_local
  LOCAL_ARRAY float tile[block_y * tile_y + 2][block_x + 2];
  for (uint i = lid(); i < (block_y * tile_y + 2) * (block_x + 2); i += block_x * block_y) {
    const uint r = i / (block_x + 2);
    const uint c = i % (block_x + 2);
    // Cells past the grid are never read as a neighbour: the border copies itself.
    const uint gy = y0 + r - 1;
    const uint gx = x0 + c - 1;
    tile[r][c] = (y0 + r >= 1 && gy < rows && x0 + c >= 1 && gx < width) ? u[gy * width + gx] : 0.0f;
  }
  LOCAL_BARRIER();
#endif
  for (uint t = 0; t < tile_y; ++t) {
    const uint y = y0 + ly + t * block_y;
    if (x >= width || y >= rows) continue;
    const uint i = y * width + x;
#if use_local
    const uint r = ly + t * block_y + 1;
    const float c0 = tile[r][lx + 1];
#else
    const float c0 = u[i];
#endif
    if (x == 0 || y == 0 || x + 1 == width || y + 1 == rows) {
      next[i] = c0;
      continue;
    }
#if use_local
    const float around = tile[r - 1][lx + 1] + tile[r + 1][lx + 1] + tile[r][lx] + tile[r][lx + 2];
#else
    const float around = u[i - width] + u[i + width] + u[i - 1] + u[i + 1];
#endif
    next[i] = c0 + K * (around - 4.0f * c0);
  }
}
