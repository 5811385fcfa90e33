#include "harness/backends/opencl_engine.hpp"

#include <CL/cl.h>

#include <CL/cl_ext.h>

#include <cstdlib>
#include <cstring>
#include <map>

#include "base/errors.hpp"
#include "base/text.hpp"

namespace varex::harness {

namespace {

// cl_nv_device_attribute_query
constexpr cl_device_info kComputeCapabilityMajorNv = 0x4000;
constexpr cl_device_info kComputeCapabilityMinorNv = 0x4001;
constexpr cl_device_info kPciBusIdNv = 0x4008;
constexpr cl_device_info kPciSlotIdNv = 0x4009;  // device << 3 | function
constexpr cl_device_info kPciDomainIdNv = 0x400A;

const char* cl_error_name(cl_int code) {
  switch (code) {
#define VAREX_CL_ERROR(name) \
  case name:                 \
    return #name;
    VAREX_CL_ERROR(CL_DEVICE_NOT_FOUND)
    VAREX_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    VAREX_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    VAREX_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    VAREX_CL_ERROR(CL_OUT_OF_RESOURCES)
    VAREX_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    VAREX_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    VAREX_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    VAREX_CL_ERROR(CL_INVALID_VALUE)
    VAREX_CL_ERROR(CL_INVALID_DEVICE)
    VAREX_CL_ERROR(CL_INVALID_CONTEXT)
    VAREX_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    VAREX_CL_ERROR(CL_INVALID_MEM_OBJECT)
    VAREX_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    VAREX_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    VAREX_CL_ERROR(CL_INVALID_KERNEL_NAME)
    VAREX_CL_ERROR(CL_INVALID_KERNEL)
    VAREX_CL_ERROR(CL_INVALID_ARG_INDEX)
    VAREX_CL_ERROR(CL_INVALID_ARG_VALUE)
    VAREX_CL_ERROR(CL_INVALID_ARG_SIZE)
    VAREX_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    VAREX_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    VAREX_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    VAREX_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    VAREX_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    VAREX_CL_ERROR(CL_INVALID_EVENT)
    VAREX_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    VAREX_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    VAREX_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
#undef VAREX_CL_ERROR
    default:
      return "CL_ERROR";
  }
}

std::string describe_cl(cl_int code) {
  return std::string(cl_error_name(code)) + " (" + std::to_string(code) + ")";
}

void check(cl_int code, const char* what) {
  if (code != CL_SUCCESS)
    throw RuntimeError(std::string("OpenCL: ") + what + " failed: " + describe_cl(code));
}

std::string device_string(cl_device_id device, cl_device_info param) {
  std::size_t size = 0;
  if (clGetDeviceInfo(device, param, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string value(size, '\0');
  clGetDeviceInfo(device, param, size, value.data(), nullptr);
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return std::string(trim(value));
}

template <typename T>
T device_value(cl_device_id device, cl_device_info param) {
  T value{};
  if (clGetDeviceInfo(device, param, sizeof(T), &value, nullptr) != CL_SUCCESS) return T{};
  return value;
}

std::string platform_string(cl_platform_id platform, cl_platform_info param) {
  std::size_t size = 0;
  if (clGetPlatformInfo(platform, param, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string value(size, '\0');
  clGetPlatformInfo(platform, param, size, value.data(), nullptr);
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

std::vector<cl_platform_id> platforms() {
  cl_uint count = 0;
  // No ICD, or an ICD loader without platforms, means no OpenCL devices; it is not an error.
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_platform_id> ids(count);
  if (clGetPlatformIDs(count, ids.data(), nullptr) != CL_SUCCESS) return {};
  return ids;
}

std::vector<cl_device_id> devices_of(cl_platform_id platform) {
  cl_uint count = 0;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_device_id> ids(count);
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr) != CL_SUCCESS) return {};
  return ids;
}

bool has_extension(const std::string& extensions, const std::string& name) {
  for (const std::string& e : split(extensions, ' ')) {
    if (e == name) return true;
  }
  return false;
}

// The device's PCI address, from the first query the platform offers: the Khronos extension, NVIDIA's
// attribute query, AMD's topology; empty when none does (CPU devices, most other platforms).
std::string pci_address(cl_device_id device, const std::string& extensions) {
  if (has_extension(extensions, "cl_khr_pci_bus_info")) {
    cl_device_pci_bus_info_khr info{};
    if (clGetDeviceInfo(device, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof info, &info, nullptr) == CL_SUCCESS)
      return format_pci(info.pci_domain, info.pci_bus, info.pci_device, info.pci_function);
  }
  if (has_extension(extensions, "cl_nv_device_attribute_query")) {
    cl_uint bus = 0, slot = 0, domain = 0;
    if (clGetDeviceInfo(device, kPciBusIdNv, sizeof bus, &bus, nullptr) == CL_SUCCESS &&
        clGetDeviceInfo(device, kPciSlotIdNv, sizeof slot, &slot, nullptr) == CL_SUCCESS) {
      // Older drivers lack the domain query: domain 0, as on most single-domain hosts.
      if (clGetDeviceInfo(device, kPciDomainIdNv, sizeof domain, &domain, nullptr) != CL_SUCCESS) domain = 0;
      return format_pci(domain, bus, slot >> 3, slot & 7);
    }
  }
  if (has_extension(extensions, "cl_amd_device_attribute_query")) {
    cl_device_topology_amd topology{};
    if (clGetDeviceInfo(device, CL_DEVICE_TOPOLOGY_AMD, sizeof topology, &topology, nullptr) == CL_SUCCESS &&
        topology.raw.type == CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD) {
      // The topology has no domain: domain 0.
      return format_pci(0, static_cast<unsigned char>(topology.pcie.bus),
                        static_cast<unsigned char>(topology.pcie.device),
                        static_cast<unsigned char>(topology.pcie.function));
    }
  }
  return "";
}

DeviceInfo describe_device(cl_platform_id platform, cl_device_id device, std::size_t p, std::size_t d) {
  DeviceInfo info;
  info.id = "ocl:" + std::to_string(p) + ":" + std::to_string(d);
  info.backend = Backend::OpenCL;
  info.name = device_string(device, CL_DEVICE_NAME);
  info.vendor = device_string(device, CL_DEVICE_VENDOR);
  info.platform = platform_string(platform, CL_PLATFORM_NAME);
  info.driver = device_string(device, CL_DRIVER_VERSION);
  const auto type = device_value<cl_device_type>(device, CL_DEVICE_TYPE);
  info.type = (type & CL_DEVICE_TYPE_GPU) ? "gpu" : (type & CL_DEVICE_TYPE_CPU) ? "cpu" : "accelerator";
  info.compute_units = device_value<cl_uint>(device, CL_DEVICE_MAX_COMPUTE_UNITS);
  info.global_mem = device_value<cl_ulong>(device, CL_DEVICE_GLOBAL_MEM_SIZE);
  info.max_alloc = device_value<cl_ulong>(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  info.local_mem = device_value<cl_ulong>(device, CL_DEVICE_LOCAL_MEM_SIZE);
  info.cache_bytes = device_value<cl_ulong>(device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
  info.max_work_group = device_value<std::size_t>(device, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  const std::string extensions = device_string(device, CL_DEVICE_EXTENSIONS);
  const std::string version = device_string(device, CL_DEVICE_VERSION);
  if (has_extension(extensions, "cl_nv_device_attribute_query")) {
    info.arch = "sm_" + std::to_string(device_value<cl_uint>(device, kComputeCapabilityMajorNv)) +
                std::to_string(device_value<cl_uint>(device, kComputeCapabilityMinorNv));
  } else if (const auto hstr = version.find("HSTR: "); hstr != std::string::npos) {
    // PoCL names the LLVM target it compiles for, e.g. "pthread-x86_64-pc-linux-gnu-skylake-avx512".
    const std::string target = version.substr(hstr + 6);
    const auto gnu = target.find("-gnu-");
    info.arch = gnu == std::string::npos ? target : target.substr(gnu + 5);
  } else {
    info.arch = version;
  }
  info.pci = pci_address(device, extensions);
  if (has_extension(extensions, "cl_khr_device_uuid")) {
    cl_uchar uuid[CL_UUID_SIZE_KHR] = {};
    if (clGetDeviceInfo(device, CL_DEVICE_UUID_KHR, sizeof uuid, uuid, nullptr) == CL_SUCCESS) {
      unsigned char bytes[16];
      std::memcpy(bytes, uuid, sizeof bytes);
      info.uuid = format_uuid(bytes);
    }
  }
  info.host = host_name();
  return info;
}

// A buffer of the device's, or one over host memory the buffer owns (`host`: CL_MEM_USE_HOST_PTR). Each
// holds one reference to its cl_mem (a caller's buffer is retained for the time it is borrowed).
class ClBuffer final : public DeviceBuffer {
 public:
  ClBuffer(cl_mem mem, std::size_t bytes, std::unique_ptr<HostBuffer> host = nullptr)
      : mem_(mem), bytes_(bytes), host_(std::move(host)) {}
  ClBuffer(const ClBuffer&) = delete;
  ClBuffer& operator=(const ClBuffer&) = delete;
  ~ClBuffer() override { clReleaseMemObject(mem_); }
  std::size_t bytes() const override { return bytes_; }
  cl_mem mem() const { return mem_; }

 private:
  cl_mem mem_;
  std::size_t bytes_;
  std::unique_ptr<HostBuffer> host_;  // released after mem_
};

// Page-locked host memory through CL_MEM_ALLOC_HOST_PTR, mapped once (for GPUs).
class ClPinnedHostBuffer final : public HostBuffer {
 public:
  ClPinnedHostBuffer(cl_command_queue queue, cl_mem mem, void* ptr, std::size_t bytes)
      : queue_(queue), mem_(mem), ptr_(ptr), bytes_(bytes) {}
  ~ClPinnedHostBuffer() override {
    clEnqueueUnmapMemObject(queue_, mem_, ptr_, 0, nullptr, nullptr);
    clFinish(queue_);
    clReleaseMemObject(mem_);
  }
  void* data() override { return ptr_; }
  std::size_t bytes() const override { return bytes_; }

 private:
  cl_command_queue queue_;
  cl_mem mem_;
  void* ptr_;
  std::size_t bytes_;
};

// An enqueued command; `timed` is false on a queue without profiling, where only completion can be asked.
class ClEvent final : public Event {
 public:
  explicit ClEvent(cl_event event, bool timed = true) : event_(event), timed_(timed) {}
  ~ClEvent() override { clReleaseEvent(event_); }

  void wait() {
    const cl_int status = clWaitForEvents(1, &event_);
    cl_int exec = CL_COMPLETE;
    clGetEventInfo(event_, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof exec, &exec, nullptr);
    if (status != CL_SUCCESS || exec < 0) {
      throw LaunchError("OpenCL command failed: " + describe_cl(exec < 0 ? exec : status));
    }
  }
  cl_ulong time(cl_profiling_info which) {
    wait();
    cl_ulong t = 0;
    check(clGetEventProfilingInfo(event_, which, sizeof t, &t, nullptr), "clGetEventProfilingInfo");
    return t;
  }
  double elapsed_ms() override {
    if (!timed_) {
      wait();
      return 0;
    }
    return (time(CL_PROFILING_COMMAND_END) - time(CL_PROFILING_COMMAND_START)) * 1e-6;
  }
  bool timed() const { return timed_; }

 private:
  cl_event event_;
  bool timed_;
};

class ClProgram final : public Program {
 public:
  explicit ClProgram(cl_program program) : program_(program) {}
  cl_program handle() const { return program_; }
  ~ClProgram() override {
    for (auto& [_, k] : kernels_) clReleaseKernel(k);
    clReleaseProgram(program_);
  }
  cl_kernel kernel(const std::string& name) const {
    if (const auto it = kernels_.find(name); it != kernels_.end()) return it->second;
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(program_, name.c_str(), &err);
    if (err != CL_SUCCESS) throw LaunchError("clCreateKernel(" + name + "): " + describe_cl(err));
    kernels_[name] = k;
    return k;
  }

 private:
  cl_program program_;
  mutable std::map<std::string, cl_kernel> kernels_;
};

class OpenClEngine final : public Engine {
 public:
  OpenClEngine(const DeviceInfo& info, cl_device_id device) : info_(info), device_(device) {
    cl_int err = CL_SUCCESS;
    context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
    check(err, "clCreateContext");
    queue_ = clCreateCommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS) {
      clReleaseContext(context_);
      check(err, "clCreateCommandQueue");
    }
  }
  // On an application's context and queue: both retained here and released with the engine.
  OpenClEngine(const DeviceInfo& info, cl_device_id device, cl_context context, cl_command_queue queue)
      : info_(info), device_(device), context_(context), queue_(queue) {
    check(clRetainContext(context_), "clRetainContext");
    check(clRetainCommandQueue(queue_), "clRetainCommandQueue");
    cl_command_queue_properties properties = 0;
    check(clGetCommandQueueInfo(queue_, CL_QUEUE_PROPERTIES, sizeof properties, &properties, nullptr),
          "clGetCommandQueueInfo");
    timed_ = (properties & CL_QUEUE_PROFILING_ENABLE) != 0;
  }
  ~OpenClEngine() override {
    release_programs();
    clFinish(queue_);
    clReleaseCommandQueue(queue_);
    clReleaseContext(context_);
  }

  const DeviceInfo& device() const override { return info_; }
  bool timed() const override { return timed_; }
  NativeObjects native_objects() const override { return {context_, device_, queue_}; }

  std::unique_ptr<DeviceBuffer> borrow(std::uint64_t handle, std::size_t bytes) override {
    cl_mem mem = reinterpret_cast<cl_mem>(static_cast<std::uintptr_t>(handle));
    cl_context context = nullptr;
    std::size_t size = 0;
    if (!mem || clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof context, &context, nullptr) != CL_SUCCESS ||
        clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, nullptr) != CL_SUCCESS)
      throw UsageError("not an OpenCL buffer");
    if (context != context_) throw UsageError("an OpenCL buffer of another context");
    if (size < bytes)
      throw UsageError("an OpenCL buffer of " + std::to_string(size) + " bytes where " +
                       std::to_string(bytes) + " are needed");
    check(clRetainMemObject(mem), "clRetainMemObject");
    return std::make_unique<ClBuffer>(mem, bytes);
  }

  std::uint64_t handle(const DeviceBuffer& buffer) const override {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(mem(buffer)));
  }

  std::unique_ptr<DeviceBuffer> allocate_device(std::size_t bytes) override {
    cl_int err = CL_SUCCESS;
    // Zero-sized buffers are invalid in OpenCL; empty inputs still get a valid (tiny) buffer.
    cl_mem mem = clCreateBuffer(context_, CL_MEM_READ_WRITE, std::max<std::size_t>(bytes, 64), nullptr, &err);
    if (err != CL_SUCCESS) allocation_failed(bytes, "device", describe_cl(err));
    return std::make_unique<ClBuffer>(mem, bytes);
  }

  std::unique_ptr<HostBuffer> allocate_host(std::size_t bytes) override {
    // On a CPU device, host memory is device memory: plain aligned allocations.
    if (info_.type == "cpu") return allocate_pageable(bytes);
    cl_int err = CL_SUCCESS;
    const std::size_t size = std::max<std::size_t>(bytes, 64);
    cl_mem mem = clCreateBuffer(context_, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size, nullptr, &err);
    if (err != CL_SUCCESS) return allocate_pageable(bytes);
    void* ptr = clEnqueueMapBuffer(queue_, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size, 0, nullptr,
                                   nullptr, &err);
    if (err != CL_SUCCESS) {
      clReleaseMemObject(mem);
      return allocate_pageable(bytes);
    }
    return std::make_unique<ClPinnedHostBuffer>(queue_, mem, ptr, bytes);
  }

  // On a CPU device the kernels use the page-aligned host allocation itself (CL_MEM_USE_HOST_PTR).
  std::unique_ptr<DeviceBuffer> allocate_mapped(std::size_t bytes) override {
    if (!offers_mapped_memory(info_)) return nullptr;
    auto host = allocate_pageable(std::max<std::size_t>(bytes, 64));
    cl_int err = CL_SUCCESS;
    cl_mem mem =
        clCreateBuffer(context_, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, host->bytes(), host->data(), &err);
    if (err != CL_SUCCESS) allocation_failed(bytes, "mapped host", describe_cl(err));
    return std::make_unique<ClBuffer>(mem, bytes, std::move(host));
  }

  EventPtr upload(DeviceBuffer& dst, std::size_t dst_offset, HostBuffer& src, std::size_t bytes) override {
    cl_event e = nullptr;
    check(clEnqueueWriteBuffer(queue_, mem(dst), CL_FALSE, dst_offset, bytes, src.data(), 0, nullptr, &e),
          "clEnqueueWriteBuffer");
    return std::make_unique<ClEvent>(e, timed_);
  }

  EventPtr download(HostBuffer& dst, const DeviceBuffer& src, std::size_t bytes,
                    std::size_t src_offset) override {
    cl_event e = nullptr;
    check(clEnqueueReadBuffer(queue_, mem(src), CL_FALSE, src_offset, bytes, dst.data(), 0, nullptr, &e),
          "clEnqueueReadBuffer");
    return std::make_unique<ClEvent>(e, timed_);
  }

  EventPtr fill(DeviceBuffer& dst, std::uint32_t pattern, std::size_t offset, std::size_t bytes) override {
    cl_event e = nullptr;
    check(clEnqueueFillBuffer(queue_, mem(dst), &pattern, sizeof pattern, offset, bytes, 0, nullptr, &e),
          "clEnqueueFillBuffer");
    return std::make_unique<ClEvent>(e, timed_);
  }

  EventPtr copy(DeviceBuffer& dst, const DeviceBuffer& src, std::size_t bytes) override {
    cl_event e = nullptr;
    check(clEnqueueCopyBuffer(queue_, mem(src), mem(dst), 0, 0, bytes, 0, nullptr, &e),
          "clEnqueueCopyBuffer");
    return std::make_unique<ClEvent>(e, timed_);
  }

  EventPtr launch(const Program& program, const std::string& kernel, const LaunchShape& shape,
                  const std::vector<KernelArg>& args) override {
    cl_kernel k = static_cast<const ClProgram&>(program).kernel(kernel);
    for (cl_uint i = 0; i < args.size(); ++i) {
      cl_int err;
      if (args[i].buffer) {
        cl_mem m = mem(*args[i].buffer);
        err = clSetKernelArg(k, i, sizeof(cl_mem), &m);
      } else {
        err = clSetKernelArg(k, i, args[i].size, args[i].bytes.data());
      }
      if (err != CL_SUCCESS)
        throw LaunchError("clSetKernelArg(" + kernel + ", " + std::to_string(i) + "): " + describe_cl(err));
    }
    const std::size_t global = shape.global;
    const std::size_t local = shape.local;
    cl_event e = nullptr;
    const cl_int err =
        clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &global, local ? &local : nullptr, 0, nullptr, &e);
    if (err != CL_SUCCESS) {
      throw LaunchError("clEnqueueNDRangeKernel(" + kernel + ", global " + std::to_string(global) +
                        ", local " + (local ? std::to_string(local) : std::string("auto")) +
                        "): " + describe_cl(err));
    }
    return std::make_unique<ClEvent>(e, timed_);
  }

  double span_ms(Event& first, Event& last) override {
    auto& a = static_cast<ClEvent&>(first);
    auto& b = static_cast<ClEvent&>(last);
    if (!timed_) return b.elapsed_ms();  // waits: 0
    return (b.time(CL_PROFILING_COMMAND_END) - a.time(CL_PROFILING_COMMAND_START)) * 1e-6;
  }

  void finish() override { check(clFinish(queue_), "clFinish"); }

 protected:
  std::unique_ptr<Program> build(const KernelSource& source, const Defines& defines) override {
    const char* text = source.text.data();
    const std::size_t length = source.text.size();
    cl_int err = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(context_, 1, &text, &length, &err);
    if (err != CL_SUCCESS) throw CompileError("clCreateProgramWithSource: " + describe_cl(err));
    // -w (OpenCL's own option): the build log is read only when the build fails, but PoCL's clang prints
    // "N warnings generated." to the process's stderr by itself, which a run would pass on to the user.
    std::string options = "-cl-std=CL1.2 -w" + to_string(defines);
    // A register cap (harness::register_cap_define) goes to NVIDIA's compiler as its own option too.
    for (const Define& d : defines)
      if (d.name == kRegisterCapDefine && d.value != "0") options += " -cl-nv-maxrregcount=" + d.value;
    err = clBuildProgram(program, 1, &device_, options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
      std::size_t size = 0;
      clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
      std::string log(size, '\0');
      clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      clReleaseProgram(program);
      throw CompileError(source.name + " " + options + ": " + describe_cl(err) + ": " +
                         std::string(trim(log)).substr(0, 2000));
    }
    return std::make_unique<ClProgram>(program);
  }

  std::string binary(const Program& program) override {
    const cl_program p = static_cast<const ClProgram&>(program).handle();
    std::size_t size = 0;
    if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || size == 0)
      return {};
    std::string image(size, '\0');
    unsigned char* pointer = reinterpret_cast<unsigned char*>(image.data());
    if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof pointer, &pointer, nullptr) != CL_SUCCESS) return {};
    return image;
  }

  std::unique_ptr<Program> load(const std::string& image) override {
    const std::size_t size = image.size();
    const auto* bytes = reinterpret_cast<const unsigned char*>(image.data());
    cl_int status = CL_SUCCESS, err = CL_SUCCESS;
    cl_program program = clCreateProgramWithBinary(context_, 1, &device_, &size, &bytes, &status, &err);
    if (err != CL_SUCCESS || status != CL_SUCCESS) return nullptr;
    if (clBuildProgram(program, 1, &device_, nullptr, nullptr, nullptr) != CL_SUCCESS) {
      clReleaseProgram(program);
      return nullptr;  // a stale or foreign binary: build from source instead
    }
    return std::make_unique<ClProgram>(program);
  }

 private:
  static cl_mem mem(const DeviceBuffer& b) { return static_cast<const ClBuffer&>(b).mem(); }

  DeviceInfo info_;
  cl_device_id device_;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  bool timed_ = true;
};

}  // namespace

std::vector<DeviceInfo> enumerate_opencl_devices() {
  std::vector<DeviceInfo> out;
  const auto ps = platforms();
  for (std::size_t p = 0; p < ps.size(); ++p) {
    const auto ds = devices_of(ps[p]);
    for (std::size_t d = 0; d < ds.size(); ++d) out.push_back(describe_device(ps[p], ds[d], p, d));
  }
  return out;
}

std::unique_ptr<Engine> open_opencl_engine(const DeviceInfo& info) {
  const auto ps = platforms();
  const auto parts = split(info.id.substr(4), ':');
  const std::size_t p = std::stoul(parts.at(0));
  const std::size_t d = std::stoul(parts.at(1));
  if (p >= ps.size()) {
    throw RuntimeError("OpenCL platform " + std::to_string(p) + " of device " + info.id +
                       " is not available (" + std::to_string(ps.size()) + " platforms found)");
  }
  const auto ds = devices_of(ps[p]);
  if (d >= ds.size()) throw RuntimeError("OpenCL device " + info.id + " is not available");
  return std::make_unique<OpenClEngine>(info, ds[d]);
}

std::unique_ptr<Engine> attach_opencl_engine(void* context, void* device, void* queue) {
  if (!context || !device || !queue) throw UsageError("an OpenCL context, device and queue are all needed");
  auto* ctx = static_cast<cl_context>(context);
  auto* dev = static_cast<cl_device_id>(device);
  auto* q = static_cast<cl_command_queue>(queue);
  cl_context queue_context = nullptr;
  cl_device_id queue_device = nullptr;
  if (clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof queue_context, &queue_context, nullptr) !=
          CL_SUCCESS ||
      clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof queue_device, &queue_device, nullptr) != CL_SUCCESS)
    throw UsageError("not an OpenCL command queue");
  if (queue_context != ctx || queue_device != dev)
    throw UsageError("the OpenCL queue belongs to another context or device");
  const auto ps = platforms();
  for (std::size_t p = 0; p < ps.size(); ++p) {
    const auto ds = devices_of(ps[p]);
    for (std::size_t d = 0; d < ds.size(); ++d) {
      if (ds[d] == dev) return std::make_unique<OpenClEngine>(describe_device(ps[p], dev, p, d), dev, ctx, q);
    }
  }
  throw UsageError("the OpenCL device is not among the platforms' devices");
}

}  // namespace varex::harness
