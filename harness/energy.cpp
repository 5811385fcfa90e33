#include "harness/energy.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mutex>
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

// A change of the counter, seen by polling it: it happened after `before` (when the poll that still read the
// old value began) and was read by `seen` (when the poll that read `value` ended).
struct Tick {
  Clock::time_point before, seen;
  std::uint64_t value = 0;
  Clock::time_point at() const { return before + (seen - before) / 2; }
  double uncertainty_s() const { return std::chrono::duration<double>(seen - before).count() / 2; }
};

// A thread that runs `body` from construction until stop() or destruction; `body` returns once the flag it is
// given is set. The last member of what it polls for, so that it stops before the members it uses go.
class Poller {
 public:
  explicit Poller(std::function<void(const std::atomic<bool>&)> body)
      : thread_([this, body = std::move(body)] { body(stop_); }) {}
  Poller(const Poller&) = delete;
  Poller& operator=(const Poller&) = delete;
  ~Poller() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: it starts once the flag exists
};

// Polls the counter on a thread of its own from construction on, keeping every change. The poll
// sleeps a little between reads, so that a CPU device's own threads keep their cores.
class TickWatch {
 public:
  explicit TickWatch(EnergyMeter& meter) : meter_(meter), poller_([this](const auto& stop) { poll(stop); }) {}
  // The ticks seen so far; the watch goes on.
  std::vector<Tick> ticks() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return ticks_;
  }

 private:
  void poll(const std::atomic<bool>& stop) {
    auto began = Clock::now();
    std::optional<std::uint64_t> last = meter_.counter();
    while (!stop && last) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      const auto begins = Clock::now();
      const auto now = meter_.counter();
      if (now && *now != *last) {
        const std::lock_guard<std::mutex> lock(mutex_);
        ticks_.push_back({began, Clock::now(), *now});
      }
      last = now;
      began = begins;
    }
  }
  std::mutex mutex_;
  EnergyMeter& meter_;
  std::vector<Tick> ticks_;
  Poller poller_;  // last
};

// The power over the ticks inside [start, end], and its relative uncertainty; nullopt with fewer than five.
// The first tick after `start` is passed over: the energy before it was partly spent before the repetitions,
// and a meter that shows its steps late would count the idle host before them. Each tick's time is known
// only to within the two polls around it (NVML's read takes milliseconds), so the time is fitted to the
// energy by least squares over every tick, and the power is the inverse of the slope: its uncertainty, twice
// the slope's standard error, falls with the number of ticks faster than the two ends' alone would.
struct TickPower {
  double watts = 0;
  double relative_uncertainty = 0;
  int ticks = 0;
};
std::optional<TickPower> power_over_ticks(const std::vector<Tick>& ticks, Clock::time_point start,
                                          Clock::time_point end, const EnergyMeter& meter) {
  std::vector<const Tick*> inside;
  for (const Tick& t : ticks)
    if (t.before >= start && t.seen <= end) inside.push_back(&t);
  if (inside.size() < 6) return std::nullopt;
  const Tick& first = *inside[1];
  std::vector<double> joules, seconds;  // since the first tick used
  for (std::size_t i = 1; i < inside.size(); ++i) {
    joules.push_back(counter_delta(first.value, inside[i]->value, meter.counter_max()) *
                     meter.counter_unit_j());
    seconds.push_back(std::chrono::duration<double>(inside[i]->at() - first.at()).count());
  }
  const double n = static_cast<double>(joules.size());
  double mean_j = 0, mean_s = 0;
  for (std::size_t i = 0; i < joules.size(); ++i) {
    mean_j += joules[i] / n;
    mean_s += seconds[i] / n;
  }
  double sjj = 0, sjs = 0;
  for (std::size_t i = 0; i < joules.size(); ++i) {
    sjj += (joules[i] - mean_j) * (joules[i] - mean_j);
    sjs += (joules[i] - mean_j) * (seconds[i] - mean_s);
  }
  if (sjj <= 0 || sjs <= 0) return std::nullopt;
  const double slope = sjs / sjj;  // seconds per joule
  double residuals = 0;
  for (std::size_t i = 0; i < joules.size(); ++i) {
    const double r = seconds[i] - (mean_s + slope * (joules[i] - mean_j));
    residuals += r * r;
  }
  const double standard_error = std::sqrt(residuals / (n - 2) / sjj);
  return TickPower{1 / slope, 2 * standard_error / slope, static_cast<int>(joules.size())};
}

// The power sampled every few milliseconds on a thread of its own, for a meter without a counter.
class PowerSampler {
 public:
  explicit PowerSampler(EnergyMeter& meter)
      : meter_(meter), poller_([this](const auto& stop) { sample(stop); }) {}
  // The mean of the samples, 0 where there were none; the sampling stops.
  double mean_watts() {
    poller_.stop();
    double sum = 0;
    for (const double w : samples_) sum += w;
    return samples_.empty() ? 0 : sum / static_cast<double>(samples_.size());
  }

 private:
  void sample(const std::atomic<bool>& stop) {
    while (!stop) {
      samples_.push_back(meter_.power_w());
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  EnergyMeter& meter_;
  std::vector<double> samples_;
  Poller poller_;  // last
};

}  // namespace

std::optional<EnergyReading> measure_energy(EnergyMeter& meter, const std::function<void()>& repetition,
                                            double rep_ms, double min_ms) {
  EnergyReading r;
  r.method = meter.method();
  const bool counting = meter.counter().has_value();
  // Repetitions in batches of about 50 ms, back to back and watched throughout, until they have run at least
  // `min_ms` (back to back they run faster than the timed ones that estimated them) and the ticks leave at
  // most a hundredth of uncertainty, or 30 s have passed.
  const int batch = std::max(1, static_cast<int>(std::ceil(std::min(min_ms, 50.0) / std::max(rep_ms, 1e-3))));
  std::optional<TickWatch> ticks;
  std::optional<PowerSampler> sampler;
  if (counting)
    ticks.emplace(meter);
  else
    sampler.emplace(meter);
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::seconds(30);
  double relative_uncertainty = 1;
  while (true) {
    for (int i = 0; i < batch; ++i) repetition();
    r.reps += batch;
    const auto end = Clock::now();
    r.seconds = std::chrono::duration<double>(end - start).count();
    if (r.seconds * 1e3 < min_ms) continue;
    if (!counting) {
      relative_uncertainty = 0;
      break;
    }
    const auto power = power_over_ticks(ticks->ticks(), start, end, meter);
    if (power) {
      r.joules = power->watts * r.seconds;
      r.ticks = power->ticks;
      relative_uncertainty = power->relative_uncertainty;
    }
    if ((power && relative_uncertainty <= 0.01) || end > deadline) break;
  }
  r.sm_clock_mhz = meter.sm_clock_mhz();
  r.mem_clock_mhz = meter.mem_clock_mhz();
  if (!counting) r.joules = sampler->mean_watts() * r.seconds;
  r.resolution_j = r.joules * relative_uncertainty;
  if (r.joules <= 0) return std::nullopt;
  return r;
}

}  // namespace varex::harness
