// An application's view of varex: it owns an OpenCL context, queue and buffers, and calls varex's operators
// on them. Every result is checked against a plain C++ computation written here, which shares nothing with
// varex. Prints one line per call, `<call>: ok variant=<id> level=<fallback level> exact_class=<whether the
// profile's entry is of the call's own class>`, and what went wrong otherwise; exits 1 when a result is wrong
// (or --expect-variant's call, select_range(0, 5) over the column, ran another variant), 2 when the setup
// fails.
//   runtime_consumer [--platform P] [--device D] [--rows N] [--profile FILE] [--expect-variant ID]
#include <CL/cl.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <stdexcept>
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
            << " level=" << varex::profile::to_string(c.level)
            << " exact_class=" << (c.exact_class ? "true" : "false")
            << (c.note.empty() ? "" : " note=" + c.note) << (detail.empty() ? "" : " " + detail) << "\n";
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

// ---- The other typed calls, each against a plain computation ----

template <class T>
std::vector<T> download(const varex::Result& r, std::size_t index, std::size_t count) {
  std::vector<T> out(count);
  r.download(out.data(), count * sizeof(T), index);
  return out;
}

std::vector<std::int32_t> small_values(std::size_t rows, int lo, int hi, std::mt19937& random) {
  std::uniform_int_distribution<int> pick(lo, hi);
  std::vector<std::int32_t> out(rows);
  for (auto& v : out) v = pick(random);
  return out;
}

void check_join(varex::Runtime& rt, const Device& d, std::mt19937& random) {
  const auto build = small_values(2000, 0, 999, random), probe = small_values(5000, 0, 1999, random);
  cl_mem b = upload(d, build), p = upload(d, probe);
  const varex::Result r = rt.hash_join({varex::Buffer::opencl(b, build.size() * 4), build.size()},
                                       {varex::Buffer::opencl(p, probe.size() * 4), probe.size()});
  const auto rows_b = download<std::uint32_t>(r, 0, r.rows()),
             rows_p = download<std::uint32_t>(r, 1, r.rows());
  std::vector<std::pair<std::uint32_t, std::uint32_t>> got, want;
  for (std::size_t i = 0; i < r.rows(); ++i) got.emplace_back(rows_b[i], rows_p[i]);
  for (std::uint32_t i = 0; i < build.size(); ++i)
    for (std::uint32_t j = 0; j < probe.size(); ++j)
      if (build[i] == probe[j]) want.emplace_back(i, j);
  std::sort(got.begin(), got.end());
  report("hash_join", rt, got == want, std::to_string(want.size()) + " pairs");
  clReleaseMemObject(b);
  clReleaseMemObject(p);
}

void check_group_by(varex::Runtime& rt, const Device& d, std::mt19937& random) {
  const auto keys = small_values(5000, -20, 29, random),
             values = small_values(5000, -1000000, 1000000, random);
  cl_mem k = upload(d, keys), v = upload(d, values);
  const varex::Result r = rt.group_by({varex::Buffer::opencl(k, keys.size() * 4), keys.size()},
                                      {varex::Buffer::opencl(v, values.size() * 4), values.size()});
  struct Group {
    std::uint32_t count = 0;
    std::int64_t sum = 0;
    std::int32_t min = INT32_MAX, max = INT32_MIN;
  };
  std::map<std::int32_t, Group> want;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    Group& g = want[keys[i]];
    ++g.count;
    g.sum += values[i];
    g.min = std::min(g.min, values[i]);
    g.max = std::max(g.max, values[i]);
  }
  const std::size_t n = r.rows();
  const auto gk = download<std::int32_t>(r, 0, n);
  const auto counts = download<std::uint32_t>(r, 1, n);
  const auto sums = download<std::int64_t>(r, 2, n);
  const auto mins = download<std::int32_t>(r, 3, n), maxs = download<std::int32_t>(r, 4, n);
  const auto ids = download<std::uint32_t>(r, 6, keys.size());
  bool ok = n == want.size();
  for (std::size_t i = 0; ok && i < n; ++i) {
    const auto it = want.find(gk[i]);
    ok = it != want.end() && it->second.count == counts[i] && it->second.sum == sums[i] &&
         it->second.min == mins[i] && it->second.max == maxs[i];
  }
  for (std::size_t i = 0; ok && i < keys.size(); ++i) ok = ids[i] < n && gk[ids[i]] == keys[i];
  report("group_by", rt, ok, std::to_string(n) + " groups");
  clReleaseMemObject(k);
  clReleaseMemObject(v);
}

void check_sort(varex::Runtime& rt, const Device& d, std::mt19937& random) {
  std::vector<std::uint32_t> tuples(2 * 3001);
  for (std::size_t i = 0; i < tuples.size(); ++i)
    tuples[i] = static_cast<std::uint32_t>(random() % (i % 2 ? 1000000 : 500));
  cl_mem m = upload(d, tuples);
  const varex::Result r = rt.sort({varex::Buffer::opencl(m, tuples.size() * 4), tuples.size() / 2}, 1);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> want;
  for (std::size_t i = 0; i < tuples.size(); i += 2) want.emplace_back(tuples[i], tuples[i + 1]);
  std::sort(want.begin(), want.end());
  const auto got = download<std::uint32_t>(r, 0, tuples.size());
  bool ok = r.rows() == want.size();
  for (std::size_t i = 0; ok && i < want.size(); ++i)
    ok = got[2 * i] == want[i].first && got[2 * i + 1] == want[i].second;
  report("sort", rt, ok);
  clReleaseMemObject(m);
}

void check_attributes(varex::Runtime& rt, const Device& d, std::mt19937& random) {
  const std::size_t rows = 4001;
  const auto records = small_values(3 * rows, -10, 10, random);  // a0, a1, a2 one column after another
  const auto a = [&](int c, std::size_t r) { return records[c * rows + r]; };
  cl_mem m = upload(d, records);
  const varex::Input input{varex::Buffer::opencl(m, records.size() * 4), rows};

  const auto bits = bitmap_of(rt.cnf_filter(input, "(a0 < 0 or a1 >= a2) and a2 != 7"));
  bool ok = true;
  for (std::size_t r = 0; r < rows; ++r)
    ok &= bit(bits, r) == ((a(0, r) < 0 || a(1, r) >= a(2, r)) && a(2, r) != 7);
  report("cnf_filter", rt, ok);

  const varex::Result sum = rt.aggregate(input, "sum", 1, "a0 < 0");
  const auto words = download<std::uint64_t>(sum, 0, 2);
  std::uint64_t kept = 0;
  std::int64_t total = 0;
  for (std::size_t r = 0; r < rows; ++r)
    if (a(0, r) < 0) ++kept, total += a(1, r);
  report("aggregate sum", rt, words[0] == kept && static_cast<std::int64_t>(words[1]) == total);

  std::vector<std::int32_t> column(records.begin() + 2 * rows, records.end());
  std::sort(column.rbegin(), column.rend());
  const auto kth = download<std::uint64_t>(rt.kth_largest(input, 10, 2), 0, 2);
  report("kth_largest", rt, kth[0] == rows && static_cast<std::int64_t>(kth[1]) == column[9]);
  clReleaseMemObject(m);
}

// LIKE as SQL has it: % any run, _ any byte, a backslash takes the next byte literally.
bool like_matches(const std::string& s, std::size_t i, const std::string& p, std::size_t j) {
  if (j == p.size()) return i == s.size();
  if (p[j] == '%') {
    for (std::size_t k = i; k <= s.size(); ++k)
      if (like_matches(s, k, p, j + 1)) return true;
    return false;
  }
  if (i == s.size()) return false;
  if (p[j] == '_') return like_matches(s, i + 1, p, j + 1);
  if (p[j] == '\\' && j + 1 < p.size()) return s[i] == p[j + 1] && like_matches(s, i + 1, p, j + 2);
  return s[i] == p[j] && like_matches(s, i + 1, p, j + 1);
}

void check_strings(varex::Runtime& rt, const Device& d, std::mt19937& random) {
  std::vector<std::string> strings;
  for (int i = 0; i < 700; ++i) {
    std::string s;
    const int length = static_cast<int>(random() % 12);
    for (int c = 0; c < length; ++c) s += "abcd"[random() % 4];
    strings.push_back(s);
  }
  // rows + 1 offsets counted from the buffer's start, then the bytes.
  const std::size_t head = 4 * (strings.size() + 1);
  std::vector<std::uint8_t> column(head);
  std::vector<std::int32_t> offsets{static_cast<std::int32_t>(head)};
  for (const std::string& s : strings) {
    column.insert(column.end(), s.begin(), s.end());
    offsets.push_back(static_cast<std::int32_t>(column.size()));
  }
  std::memcpy(column.data(), offsets.data(), head);
  cl_mem m = upload(d, column);
  const varex::Input input{varex::Buffer::opencl(m, column.size()), strings.size()};
  const std::string pattern = "%ab_c%";
  const auto liked = bitmap_of(rt.like(input, pattern));
  bool ok = true;
  for (std::size_t r = 0; r < strings.size(); ++r)
    ok &= bit(liked, r) == like_matches(strings[r], 0, pattern, 0);
  report("like", rt, ok);
  const auto found = bitmap_of(rt.regex(input, "a[bc]+d"));
  ok = true;
  for (std::size_t r = 0; r < strings.size(); ++r)
    ok &= bit(found, r) == std::regex_search(strings[r], std::regex("a[bc]+d"));
  report("regex", rt, ok);
  clReleaseMemObject(m);
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
  try {
    check_selection(*rt, d, column);
    check_selection(*rt, d, {});  // an empty column is a column
    check_join(*rt, d, random);
    check_group_by(*rt, d, random);
    check_sort(*rt, d, random);
    check_attributes(*rt, d, random);
    check_strings(*rt, d, random);
  } catch (const varex::Error& e) {
    std::cout << "error: " << e.what() << "\n";
    ++failures;
  }
  if (!args["--expect-variant"].empty()) {
    cl_mem mem = upload(d, column);
    rt->select_range({varex::Buffer::opencl(mem, column.size() * 4), column.size()}, 0, 5);
    clReleaseMemObject(mem);
    report("expected variant", *rt, rt->last_choice().variant == args["--expect-variant"],
           "expected " + args["--expect-variant"]);
  }
  rt.reset();
  clReleaseCommandQueue(d.queue);
  clReleaseContext(d.context);
  return failures ? 1 : 0;
}
