// An application's view of varex: it owns an OpenCL context, queue and buffers, and calls varex's operators
// on them. Every result is checked against a plain C++ computation written here, which shares nothing with
// varex. Prints one line per call, `<call>: ok variant=<id> level=<fallback level>`, and what went wrong
// otherwise; exits 1 when a result is wrong, 2 when the setup fails.
//   runtime_consumer [--platform P] [--device D] [--rows N] [--profile FILE] [--expect-variant ID]
#include <CL/cl.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <varex/runtime.hpp>
#include <vector>

namespace {

struct Device {
  cl_context context = nullptr;
  cl_device_id device = nullptr;
  cl_command_queue queue = nullptr;
};

Device open_device(unsigned platform_index, unsigned device_index) {
  cl_uint count = 0;
  clGetPlatformIDs(0, nullptr, &count);
  std::vector<cl_platform_id> platforms(count);
  if (count) clGetPlatformIDs(count, platforms.data(), nullptr);
  if (platform_index >= count)
    throw std::runtime_error("no OpenCL platform " + std::to_string(platform_index));
  cl_uint devices = 0;
  clGetDeviceIDs(platforms[platform_index], CL_DEVICE_TYPE_ALL, 0, nullptr, &devices);
  std::vector<cl_device_id> ids(devices);
  if (devices) clGetDeviceIDs(platforms[platform_index], CL_DEVICE_TYPE_ALL, devices, ids.data(), nullptr);
  if (device_index >= devices) throw std::runtime_error("no OpenCL device " + std::to_string(device_index));
  Device d;
  d.device = ids[device_index];
  cl_int err = CL_SUCCESS;
  d.context = clCreateContext(nullptr, 1, &d.device, nullptr, nullptr, &err);
  if (err != CL_SUCCESS) throw std::runtime_error("clCreateContext: " + std::to_string(err));
  d.queue = clCreateCommandQueue(d.context, d.device, CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) throw std::runtime_error("clCreateCommandQueue: " + std::to_string(err));
  return d;
}

// A buffer of the application's, filled from host memory.
template <class T>
cl_mem upload(const Device& d, const std::vector<T>& values) {
  cl_int err = CL_SUCCESS;
  const std::size_t bytes = std::max<std::size_t>(values.size() * sizeof(T), 4);
  cl_mem mem = clCreateBuffer(d.context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  if (err != CL_SUCCESS) throw std::runtime_error("clCreateBuffer: " + std::to_string(err));
  if (!values.empty())
    clEnqueueWriteBuffer(d.queue, mem, CL_TRUE, 0, values.size() * sizeof(T), values.data(), 0, nullptr,
                         nullptr);
  return mem;
}

int failures = 0;

void report(const std::string& call, const varex::Runtime& rt, bool ok, const std::string& detail = "") {
  const varex::Choice& c = rt.last_choice();
  std::cout << call << ": " << (ok ? "ok" : "WRONG") << " variant=" << c.variant
            << " level=" << varex::profile::to_string(c.level) << (c.note.empty() ? "" : " note=" + c.note)
            << (detail.empty() ? "" : " " + detail) << "\n";
  if (!ok) ++failures;
}

// A call that must throw varex::Error.
void expect_error(const std::string& what, const std::function<void()>& call) {
  try {
    call();
    std::cout << what << ": WRONG no error\n";
    ++failures;
  } catch (const varex::Error& e) {
    std::cout << what << ": error ok (" << e.what() << ")\n";
  }
}

std::vector<std::uint8_t> bitmap_of(const varex::Result& r) {
  std::vector<std::uint8_t> bits((r.rows() + 7) / 8);
  r.download(bits.data(), bits.size());
  return bits;
}

bool bit(const std::vector<std::uint8_t>& bits, std::uint64_t r) {
  return (bits[r / 8] >> (r % 8)) & 1;
}

void check_selection(varex::Runtime& rt, const Device& d, const std::vector<std::int32_t>& column) {
  cl_mem mem = upload(d, column);
  const varex::Input input{varex::Buffer::opencl(mem, column.size() * 4), column.size()};
  const std::int32_t lo = -1000000000, hi = 1000000000;
  const auto typed = bitmap_of(rt.select_range(input, lo, hi));
  bool ok = true;
  for (std::size_t r = 0; r < column.size(); ++r) ok &= bit(typed, r) == (column[r] >= lo && column[r] <= hi);
  report("select_range", rt, ok);
  // The generic call of the same operator, the other way round.
  const auto generic = bitmap_of(rt.run(
      "selection", {input}, {{"lo", std::to_string(lo)}, {"hi", std::to_string(hi)}, {"negate", "true"}}));
  ok = true;
  for (std::size_t r = 0; r < column.size(); ++r)
    ok &= bit(generic, r) == !(column[r] >= lo && column[r] <= hi);
  report("run selection negate", rt, ok);
  expect_error("null buffer", [&] { rt.select_range({varex::Buffer{}, column.size()}, lo, hi); });
  expect_error("rows beyond the buffer", [&] {
    rt.select_range({input.buffer, column.size() + 1024}, lo, hi);
  });
  expect_error("unknown operator", [&] { rt.run("no_such_operator", {input}); });
  expect_error("unknown query key", [&] { rt.run("selection", {input}, {{"low", "3"}}); });
  expect_error("unknown parameter", [&] { rt.override_parameters("selection", {{"no_such_knob", "1"}}); });
  clReleaseMemObject(mem);
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> args{{"--platform", "0"}, {"--device", "0"}, {"--rows", "100003"}};
  for (int i = 1; i + 1 < argc; i += 2) args[argv[i]] = argv[i + 1];
  Device d;
  std::optional<varex::Runtime> rt;
  try {
    d = open_device(std::stoul(args["--platform"]), std::stoul(args["--device"]));
    varex::Options options;
    options.profile = args["--profile"];
    options.time_calls = true;
    rt.emplace(varex::Runtime::attach_opencl(d.context, d.device, d.queue, options));
  } catch (const std::exception& e) {
    std::cerr << "runtime_consumer: " << e.what() << "\n";
    return 2;
  }
  std::cout << "device: " << rt->device_id() << " " << rt->device_key().name << "\n";

  std::mt19937 random(7);
  std::vector<std::int32_t> column(std::stoull(args["--rows"]));
  for (auto& v : column) v = static_cast<std::int32_t>(random());
  check_selection(*rt, d, column);
  check_selection(*rt, d, {});  // an empty column is a column
  if (!args["--expect-variant"].empty()) {
    rt->select_range({varex::Buffer::opencl(upload(d, column), column.size() * 4), column.size()}, 0, 5);
    if (rt->last_choice().variant != args["--expect-variant"]) {
      std::cout << "expected variant " << args["--expect-variant"] << ", ran " << rt->last_choice().variant
                << "\n";
      ++failures;
    }
  }
  rt.reset();
  clReleaseCommandQueue(d.queue);
  clReleaseContext(d.context);
  return failures ? 1 : 0;
}
