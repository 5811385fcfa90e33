// The runtime library on an application's CUDA buffers, timed: the application makes its own context,
// stream and cuMemAlloc buffers, fills them with data of the distribution `varex run` generates for the same
// flags, and calls one operator `--calls` times. Prints one JSON line: the operator, the variant and its
// parameters as last_choice() reports them, each call's device time and their median, so that the same
// variant can be measured by `varex run --set ...` on the same machine (scripts/gpu_evidence.sh, runtime30);
// and each call's host time until the result is in the application's hands (a scalar downloaded).
//   runtime_cuda_timing --op selection|hashjoin|groupby|ra_sort|count --rows N [--rows2 M] [--distinct D]
//                       [--where FILTER] [--calls 11] [--profile FILE] [--set name=value,...] [--dump DIR]
//                       [--adapt SHARE] [--adapt-strategy NAME]
// count is Govindaraju's selectivity count (document 004, sec. 5.11): the rows of four uniform int32
// attributes, stored column after column, that --where keeps (empty: all).
// --dump DIR writes the join's sides to DIR/build.bin and DIR/probe.bin; --adapt SHARE turns online
// adaptation on (exploring at most SHARE of the calls, searched by the tuner's strategy NAME, "local" unless
// given) and adds its report.
#include <cuda.h>
#include <execinfo.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <varex/runtime.hpp>
#include <vector>

namespace {

void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(r));
}

// A device buffer of the application's, filled from the host.
struct DeviceArray {
  CUdeviceptr ptr = 0;
  std::size_t bytes = 0;
  template <class T>
  explicit DeviceArray(const std::vector<T>& values)
      : bytes(std::max<std::size_t>(values.size() * sizeof(T), 4)) {
    check(cuMemAlloc(&ptr, bytes), "cuMemAlloc");
    if (!values.empty()) check(cuMemcpyHtoD(ptr, values.data(), values.size() * sizeof(T)), "cuMemcpyHtoD");
  }
  ~DeviceArray() { cuMemFree(ptr); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  varex::Input input(std::uint64_t rows) const { return {varex::Buffer::cuda(ptr, bytes), rows}; }
};

// Distinct int32 values: an odd multiplier is a bijection of the 32-bit words.
std::int32_t distinct_key(std::uint64_t i) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(i * 2654435761u));
}

// A variant's parameters as the members of a JSON object.
void print_params(const varex::profile::Params& params) {
  bool first = true;
  for (const auto& [name, value] : params) {
    std::cout << (first ? "" : ", ") << "\"" << name << "\": \"" << value << "\"";
    first = false;
  }
}

}  // namespace

// A crash says where (the frames of the shared libraries as offsets, for addr2line).
void on_crash(int) {
  void* frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
  _exit(139);
}

namespace {

using Args = std::map<std::string, std::string>;

varex::Options options_of(Args& args) {
  varex::Options options;
  options.profile = args["--profile"];
  options.time_calls = true;
  if (!args["--adapt"].empty()) {  // online adaptation, exploring at most this share of the calls
    options.adapt = true;
    options.explore_share = std::stod(args["--adapt"]);
    if (!args["--adapt-strategy"].empty()) options.adapt_strategy = args["--adapt-strategy"];
  }
  return options;
}

// The application's data for `op` on the device, and the call that runs it.
struct Workload {
  std::vector<std::unique_ptr<DeviceArray>> arrays;
  std::vector<std::int32_t> a, b;  // the host's copies (the join's sides for --dump)
  std::function<varex::Result()> call;
};

void prepare(Workload& w, const std::string& op, Args& args, std::uint64_t rows, varex::Runtime& rt) {
  std::mt19937_64 random(42);
  auto& a = w.a;
  auto& b = w.b;
  auto& arrays = w.arrays;
  if (op == "selection") {  // uniform over int32; the range keeps half
    a.resize(rows);
    for (auto& v : a) v = static_cast<std::int32_t>(random());
    arrays.push_back(std::make_unique<DeviceArray>(a));
    w.call = [&w, &rt, rows] {
      return rt.select_range(w.arrays[0]->input(rows), INT32_MIN / 2, INT32_MAX / 2);
    };
  } else if (op == "hashjoin") {  // unique build keys; every probe key matches one (match ratio 1)
    const std::uint64_t rows2 = std::stoull(args["--rows2"]);
    a.resize(rows);
    for (std::uint64_t i = 0; i < rows; ++i) a[i] = distinct_key(i);
    std::shuffle(a.begin(), a.end(), random);
    b.resize(rows2);
    for (auto& v : b) v = distinct_key(random() % rows);
    arrays.push_back(std::make_unique<DeviceArray>(a));
    arrays.push_back(std::make_unique<DeviceArray>(b));
    w.call = [&w, &rt, rows, rows2] {
      return rt.hash_join(w.arrays[0]->input(rows), w.arrays[1]->input(rows2));
    };
  } else if (op == "groupby") {  // keys of `distinct` groups, uniform; values uniform
    const std::uint64_t distinct = std::stoull(args["--distinct"]);
    a.resize(rows);
    b.resize(rows);
    for (auto& v : a) v = distinct_key(random() % distinct);
    for (auto& v : b) v = static_cast<std::int32_t>(random());
    arrays.push_back(std::make_unique<DeviceArray>(a));
    arrays.push_back(std::make_unique<DeviceArray>(b));
    w.call = [&w, &rt, rows] { return rt.group_by(w.arrays[0]->input(rows), w.arrays[1]->input(rows)); };
  } else if (op == "ra_sort") {  // (key, value) tuples, both uniform
    std::vector<std::uint32_t> tuples(2 * rows);
    for (auto& v : tuples) v = static_cast<std::uint32_t>(random());
    arrays.push_back(std::make_unique<DeviceArray>(tuples));
    w.call = [&w, &rt, rows] { return rt.sort(w.arrays[0]->input(rows), 1); };
  } else if (op == "count") {  // four uniform attributes, column after column
    a.resize(4 * rows);
    for (auto& v : a) v = static_cast<std::int32_t>(random());
    arrays.push_back(std::make_unique<DeviceArray>(a));
    const std::string where = args["--where"];
    w.call = [&w, &rt, rows, where] { return rt.aggregate(w.arrays[0]->input(rows), "count", 0, where); };
  } else {
    throw std::runtime_error("unknown --op " + op);
  }
}

void print_adaptation(const varex::Adaptation& a) {
  std::cout << ", \"adaptation\": {\"calls\": " << a.calls << ", \"exploring_calls\": " << a.exploring_calls
            << ", \"candidates\": " << a.candidates << ", \"verified\": " << a.verified
            << ", \"rejected\": " << a.rejected << ", \"settled_variant\": \"" << a.settled_variant
            << "\", \"settled_ms\": " << a.settled_ms << ", \"regret_ms\": " << a.regret_ms
            << ", \"total_ms\": " << a.total_ms << ", \"exploring_ms\": " << a.exploring_ms
            << ", \"settled_params\": {";
  print_params(a.settled_params);
  std::cout << "}, \"tried\": [";
  for (std::size_t i = 0; i < a.tried.size(); ++i) {
    const varex::Adaptation::Tried& t = a.tried[i];
    std::cout << (i ? ", " : "") << "{\"variant\": \"" << t.variant << "\", \"runs\": " << t.runs
              << ", \"median_ms\": " << t.median_ms << ", \"verified\": " << (t.verified ? "true" : "false")
              << ", \"rejected\": " << (t.rejected ? "true" : "false") << "}";
  }
  std::cout << "]}";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The JSON line: the variant the last call ran, the calls' times, the kernels and the adaptation.
void print_report(const std::string& op, const varex::Runtime& rt, const std::vector<double>& times,
                  const std::vector<double>& host_times, std::uint64_t result_rows,
                  const std::uint64_t* scalar) {
  const varex::Choice& c = rt.last_choice();
  std::cout << "{\"op\": \"" << op << "\", \"variant\": \"" << c.variant << "\", \"level\": \""
            << varex::profile::to_string(c.level) << "\", \"rows_out\": " << result_rows << ", \"params\": {";
  print_params(c.params);
  std::cout << "}, \"device_ms\": [";
  for (std::size_t i = 0; i < times.size(); ++i) std::cout << (i ? ", " : "") << times[i];
  std::cout << "], \"median_ms\": " << median(times) << ", \"host_ms\": [";
  for (std::size_t i = 0; i < host_times.size(); ++i) std::cout << (i ? ", " : "") << host_times[i];
  std::cout << "], \"host_median_ms\": " << median(host_times) << ", \"scalar\": [" << scalar[0] << ", "
            << scalar[1] << "], \"kernels\": [";
  for (std::size_t i = 0; i < c.kernels.size(); ++i)
    std::cout << (i ? ", " : "") << "[\"" << c.kernels[i].first << "\", " << c.kernels[i].second << "]";
  std::cout << "]";
  for (const varex::Adaptation& a : rt.adaptation()) print_adaptation(a);
  std::cout << "}\n";
  std::cout.flush();
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGSEGV, on_crash);
  Args args{{"--calls", "11"}, {"--rows2", "0"}, {"--distinct", "0"}};
  for (int i = 1; i + 1 < argc; i += 2) args[argv[i]] = argv[i + 1];
  try {
    check(cuInit(0), "cuInit");
    CUdevice device = 0;
    check(cuDeviceGet(&device, 0), "cuDeviceGet");
    CUcontext context = nullptr;
    check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
    CUstream stream = nullptr;
    check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    // The runtime and every array go before the stream and the context they use.
    std::optional<varex::Runtime> holder(varex::Runtime::attach_cuda(context, stream, options_of(args)));
    varex::Runtime& rt = *holder;
    if (!args["--set"].empty()) {
      varex::profile::Params pins;
      std::stringstream list(args["--set"]);
      for (std::string item; std::getline(list, item, ',');)
        pins[item.substr(0, item.find('='))] = item.substr(item.find('=') + 1);
      rt.override_parameters(args["--op"], pins);
    }

    const std::string op = args["--op"];
    if (std::stoi(args["--calls"]) < 2)
      throw std::runtime_error("--calls must be at least 2 (the first is not timed)");
    Workload w;
    prepare(w, op, args, std::stoull(args["--rows"]), rt);
    // The join's sides as little-endian int32 files, so that `varex run --input --input2` times the same
    // data.
    if (!args["--dump"].empty() && op == "hashjoin") {
      std::ofstream(args["--dump"] + "/build.bin", std::ios::binary)
          .write(reinterpret_cast<const char*>(w.a.data()), static_cast<std::streamsize>(w.a.size() * 4));
      std::ofstream(args["--dump"] + "/probe.bin", std::ios::binary)
          .write(reinterpret_cast<const char*>(w.b.data()), static_cast<std::streamsize>(w.b.size() * 4));
    }
    w.a = {};
    w.b = {};

    std::vector<double> times, host_times;
    std::uint64_t result_rows = 0;
    std::uint64_t scalar[2] = {0, 0};  // a scalar result's rows aggregated and value
    for (int i = 0; i < std::stoi(args["--calls"]); ++i) {
      const auto start = std::chrono::steady_clock::now();
      const varex::Result r = w.call();
      if (r.kind() == varex::ResultKind::Scalar) r.download(scalar, sizeof scalar);
      host_times.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      result_rows = r.rows();
      times.push_back(rt.last_choice().device_ms.value_or(-1));
    }
    times.erase(times.begin());  // the first call compiles or loads the program
    host_times.erase(host_times.begin());
    print_report(op, rt, times, host_times, result_rows, scalar);
    w.arrays.clear();
    holder.reset();
    cuStreamDestroy(stream);
    cuDevicePrimaryCtxRelease(device);
  } catch (const std::exception& e) {
    std::cerr << "runtime_cuda_timing: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
