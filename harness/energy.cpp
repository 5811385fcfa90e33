#include "harness/energy.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <vector>

namespace varex::harness {

namespace {

using Clock = std::chrono::steady_clock;

// NVML's C interface, the few calls varex makes (nvml.h): every call returns 0 on success.
using nvmlDevice_t = void*;
struct Nvml {
  int (*init)() = nullptr;
  int (*by_index)(unsigned, nvmlDevice_t*) = nullptr;
  int (*by_pci)(const char*, nvmlDevice_t*) = nullptr;
  int (*total_energy)(nvmlDevice_t, unsigned long long*) = nullptr;  // mJ since the driver loaded
  int (*power)(nvmlDevice_t, unsigned*) = nullptr;                   // mW
  int (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;              // MHz; 1 = SM, 2 = memory
};

// NVML loaded once per process; nullptr where the library or its calls are missing or init fails.
const Nvml* nvml() {
  static const Nvml* loaded = []() -> const Nvml* {
    const char* path = std::getenv("VAREX_NVML_LIBRARY");
    void* lib = ::dlopen(path && *path ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return nullptr;
    static Nvml n;
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, name));
    };
    get(n.init, "nvmlInit_v2");
    get(n.by_index, "nvmlDeviceGetHandleByIndex_v2");
    get(n.by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
    get(n.total_energy, "nvmlDeviceGetTotalEnergyConsumption");
    get(n.power, "nvmlDeviceGetPowerUsage");
    get(n.clock, "nvmlDeviceGetClockInfo");
    if (!n.init || !n.by_index || !n.by_pci || !n.total_energy || !n.power || !n.clock || n.init() != 0)
      return nullptr;
    return &n;
  }();
  return loaded;
}

class NvmlMeter final : public EnergyMeter {
 public:
  NvmlMeter(const Nvml& api, nvmlDevice_t device) : api_(api), device_(device) {
    unsigned long long probe = 0;
    has_counter_ = api_.total_energy(device_, &probe) == 0;
  }
  std::string method() const override { return has_counter_ ? "nvml counter" : "nvml power"; }
  std::optional<std::uint64_t> counter() override {
    unsigned long long mj = 0;
    if (!has_counter_ || api_.total_energy(device_, &mj) != 0) return std::nullopt;
    return static_cast<std::uint64_t>(mj);
  }
  double counter_unit_j() const override { return 1e-3; }
  std::uint64_t counter_max() const override { return UINT64_MAX; }
  double power_w() override {
    unsigned mw = 0;
    return api_.power(device_, &mw) == 0 ? mw / 1e3 : 0;
  }
  double sm_clock_mhz() override { return clock(1); }
  double mem_clock_mhz() override { return clock(2); }

 private:
  double clock(int which) {
    unsigned mhz = 0;
    return api_.clock(device_, which, &mhz) == 0 ? mhz : 0;
  }
  const Nvml& api_;
  nvmlDevice_t device_;
  bool has_counter_ = false;
};

// RAPL's package domain: microjoules, wrapping at max_energy_range_uj.
class RaplMeter final : public EnergyMeter {
 public:
  RaplMeter(std::string energy_file, std::uint64_t max) : file_(std::move(energy_file)), max_(max) {}
  std::string method() const override { return "rapl"; }
  std::optional<std::uint64_t> counter() override {
    std::ifstream in(file_);
    std::uint64_t uj = 0;
    if (!(in >> uj)) return std::nullopt;
    return uj;
  }
  double counter_unit_j() const override { return 1e-6; }
  std::uint64_t counter_max() const override { return max_; }
  double power_w() override { return 0; }

 private:
  std::string file_;
  std::uint64_t max_;
};

std::string nvml_pci(const std::string& pci) {
  // DeviceInfo's "pci dddd:bb:dd.f" is the form NVML takes.
  return pci.rfind("pci ", 0) == 0 ? pci.substr(4) : pci;
}

}  // namespace

std::unique_ptr<EnergyMeter> energy_meter(const DeviceInfo& device) {
  if (const Nvml* api = nvml()) {
    nvmlDevice_t handle = nullptr;
    if (const char* bind = std::getenv("VAREX_NVML_BIND_ALL"); bind && *bind) {
      if (api->by_index(static_cast<unsigned>(std::atoi(bind)), &handle) == 0)
        return std::make_unique<NvmlMeter>(*api, handle);
      return nullptr;
    }
    if (!device.pci.empty() && api->by_pci(nvml_pci(device.pci).c_str(), &handle) == 0)
      return std::make_unique<NvmlMeter>(*api, handle);
  }
  if (device.type == "cpu") {
    const std::string domain = "/sys/class/powercap/intel-rapl:0/";
    std::ifstream energy(domain + "energy_uj"), range(domain + "max_energy_range_uj");
    std::uint64_t now = 0, max = 0;
    if (energy >> now && range >> max && max > 0)
      return std::make_unique<RaplMeter>(domain + "energy_uj", max);
  }
  return nullptr;
}

std::uint64_t counter_delta(std::uint64_t before, std::uint64_t after, std::uint64_t max) {
  if (after >= before) return after - before;
  return (max - before) + after + 1;  // wrapped once
}

namespace {

// The smallest change of the counter seen while watching it tick for up to `watch`.
std::uint64_t watch_step(EnergyMeter& meter, std::chrono::milliseconds watch) {
  const auto first = meter.counter();
  if (!first) return 1;
  std::uint64_t last = *first, step = 0;
  const auto end = Clock::now() + watch;
  while (Clock::now() < end) {
    const auto now = meter.counter();
    if (!now) break;
    if (*now != last) {
      const std::uint64_t d = counter_delta(last, *now, meter.counter_max());
      step = step == 0 ? d : std::min(step, d);
      last = *now;
    }
    std::this_thread::yield();  // polled as fast as it reads: a pause would see several steps as one
  }
  return step == 0 ? 1 : step;
}

}  // namespace

std::uint64_t EnergyMeter::counter_step() {
  if (!step_) step_ = watch_step(*this, std::chrono::milliseconds(200));
  return *step_;
}

std::optional<EnergyReading> measure_energy(EnergyMeter& meter, const std::function<void()>& repetition,
                                            double rep_ms, double min_ms) {
  EnergyReading r;
  r.method = meter.method();
  const bool counting = meter.counter().has_value();
  const double step_j = counting ? meter.counter_step() * meter.counter_unit_j() : 0;
  r.resolution_j = step_j;
  int reps = std::max(1, static_cast<int>(std::ceil(min_ms / std::max(rep_ms, 1e-3))));
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (true) {
    std::atomic<bool> stop{false};
    std::vector<double> power;
    std::thread sampler;
    if (!counting) {
      sampler = std::thread([&] {
        while (!stop) {
          power.push_back(meter.power_w());
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
      });
    }
    const auto before = counting ? meter.counter() : std::nullopt;
    const auto start = Clock::now();
    for (int i = 0; i < reps; ++i) repetition();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const auto after = counting ? meter.counter() : std::nullopt;
    r.sm_clock_mhz = meter.sm_clock_mhz();
    r.mem_clock_mhz = meter.mem_clock_mhz();
    stop = true;
    if (sampler.joinable()) sampler.join();
    r.reps = reps;
    r.seconds = seconds;
    if (counting) {
      if (!before || !after) return std::nullopt;
      r.joules = counter_delta(*before, *after, meter.counter_max()) * meter.counter_unit_j();
    } else {
      if (power.empty()) return std::nullopt;
      double sum = 0;
      for (const double w : power) sum += w;
      r.joules = sum / static_cast<double>(power.size()) * seconds;
    }
    // Enough when the repetitions took at least `min_ms` (back to back they run faster than the timed ones
    // that estimated them) and the counter's step is at most a hundredth of what was measured, or time is up.
    const bool long_enough = seconds * 1e3 >= min_ms;
    const bool resolved = !counting || r.joules >= 100 * step_j;
    if ((long_enough && resolved) || Clock::now() > deadline) break;
    double grow = 1.0;
    if (!long_enough) grow = 1.1 * min_ms / std::max(seconds * 1e3, 1e-3);
    if (!resolved) grow = std::max({grow, 2.0, r.joules > 0 ? std::ceil(100 * step_j / r.joules) : 4.0});
    reps = static_cast<int>(std::min<double>(std::max(reps + 1.0, std::ceil(reps * grow)), 1e9));
  }
  if (r.joules <= 0) return std::nullopt;
  return r;
}

}  // namespace varex::harness
