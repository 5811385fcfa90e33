/* The reference of sum_cuda: the column's sum modulo 2^32 in plain C. Built by
 *   cc -O2 -shared -fPIC reference.c -o reference.so
 * varex calls int sum_reference(const int32_t* values, uint32_t* sum, int64_t rows). */
#include <stdint.h>

int sum_reference(const int32_t* values, uint32_t* sum, int64_t rows) {
  uint32_t s = 0;
  for (int64_t i = 0; i < rows; ++i) s += (uint32_t)values[i];
  *sum = s;
  return 0;
}
