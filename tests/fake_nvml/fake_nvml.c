/* A scripted NVML for the energy tests (tests/test_energy.cpp): the calls varex makes (harness/energy.cpp),
   answering from environment variables, since the machines the tests run on have no NVIDIA GPU:
     FAKE_NVML_WATTS       the power drawn (default 100); the counter grows by it with the wall time
     FAKE_NVML_COUNTER     the counter's start in mJ (default 1000), or "none": a device without the counter
     FAKE_NVML_STEP_MJ     the counter's step in mJ (default 1): it moves in multiples of it
     FAKE_NVML_READ_US     how long a read of the counter takes, in microseconds (default 0): NVML's take
                           milliseconds on an H200; the value is the one at the read's middle
     FAKE_NVML_SM_MHZ, FAKE_NVML_MEM_MHZ  the clocks reported (default 1980 and 2619)
   The counter is unsigned 64-bit and wraps as NVML's would. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct timespec start;
static int device_token;

static double env_number(const char* name, double fallback) {
  const char* v = getenv(name);
  return v && *v ? strtod(v, NULL) : fallback;
}

static double seconds_since_init(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9;
}

int nvmlInit_v2(void) {
  clock_gettime(CLOCK_MONOTONIC, &start);
  return 0;
}

int nvmlShutdown(void) { return 0; }

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  if (index != 0) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
  *device = &device_token;
  return 0;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char* pci, void** device) {
  (void)pci;
  (void)device;
  return 6; /* NVML_ERROR_NOT_FOUND: the test devices are found by index only */
}

int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* energy) {
  (void)device;
  const char* counter = getenv("FAKE_NVML_COUNTER");
  if (counter && strcmp(counter, "none") == 0) return 3; /* NVML_ERROR_NOT_SUPPORTED */
  const uint64_t first = counter && *counter ? strtoull(counter, NULL, 10) : 1000;
  const uint64_t step = (uint64_t)env_number("FAKE_NVML_STEP_MJ", 1);
  const double read_s = env_number("FAKE_NVML_READ_US", 0) / 1e6;
  const struct timespec half = {0, (long)(read_s / 2 * 1e9)};
  nanosleep(&half, NULL);
  const uint64_t grown = (uint64_t)(seconds_since_init() * env_number("FAKE_NVML_WATTS", 100) * 1000.0);
  nanosleep(&half, NULL);
  *energy = (unsigned long long)(first + grown / step * step); /* wraps modulo 2^64 */
  return 0;
}

int nvmlDeviceGetPowerUsage(void* device, unsigned* milliwatts) {
  (void)device;
  *milliwatts = (unsigned)(env_number("FAKE_NVML_WATTS", 100) * 1000.0);
  return 0;
}

int nvmlDeviceGetClockInfo(void* device, int type, unsigned* mhz) {
  (void)device;
  *mhz = (unsigned)(type == 1 ? env_number("FAKE_NVML_SM_MHZ", 1980) : env_number("FAKE_NVML_MEM_MHZ", 2619));
  return 0;
}
