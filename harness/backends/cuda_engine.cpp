#include "harness/backends/cuda_engine.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "harness/backends/cuda_driver.hpp"
#include "harness/backends/nvrtc_library.hpp"
#include "harness/backends/vendor_library.hpp"

namespace varex::harness {

namespace {

// Errors after which the context is unusable: the worker owning it must be replaced.
bool sticky(CUresult code) {
  return code == CUDA_ERROR_ILLEGAL_ADDRESS || code == CUDA_ERROR_LAUNCH_FAILED ||
         code == CUDA_ERROR_ILLEGAL_INSTRUCTION || code == CUDA_ERROR_MISALIGNED_ADDRESS ||
         code == CUDA_ERROR_INVALID_PC || code == CUDA_ERROR_HARDWARE_STACK_ERROR ||
         code == CUDA_ERROR_LAUNCH_TIMEOUT || code == CUDA_ERROR_ASSERT ||
         code == CUDA_ERROR_INVALID_ADDRESS_SPACE;
}

const CudaDriver& driver() {
  const CudaDriver* d = CudaDriver::get();
  if (!d) throw RuntimeError("the CUDA driver is not available on this machine");
  return *d;
}

void check(CUresult code, const char* what) {
  if (code == CUDA_SUCCESS) return;
  if (sticky(code)) throw LaunchError(std::string("CUDA: ") + what + ": " + driver().describe(code), true);
  throw RuntimeError(std::string("CUDA: ") + what + " failed: " + driver().describe(code));
}

int attribute(CUdevice device, CUdevice_attribute which) {
  int value = 0;
  driver().cuDeviceGetAttribute(&value, which, device);
  return value;
}

// Compute capability as NVRTC spells it, e.g. 90.
int capability(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0) throw CompileError("not a CUDA architecture: " + arch);
  return static_cast<int>(parse_int(arch.substr(3), "CUDA architecture"));
}

struct NvrtcOutput {
  std::string image;  // CUBIN, or PTX when NVRTC does not know the device's architecture
  bool is_ptx = false;
};

const NvrtcLibrary& nvrtc() {
  const NvrtcLibrary* n = NvrtcLibrary::get();
  if (!n) throw CompileError("NVRTC could not be loaded (tried " + NvrtcLibrary::searched() + ")");
  return *n;
}

NvrtcOutput run_nvrtc(const KernelSource& source, const Defines& defines, const std::string& arch) {
  const NvrtcLibrary& lib = nvrtc();
  const int cc = capability(arch);
  // Use the device's own architecture when NVRTC knows it, else the newest older one as PTX.
  int num = 0;
  lib.nvrtcGetNumSupportedArchs(&num);
  std::vector<int> archs(std::max(num, 0));
  if (num > 0) lib.nvrtcGetSupportedArchs(archs.data());
  const bool exact = std::find(archs.begin(), archs.end(), cc) != archs.end();
  int target = cc;
  if (!exact) {
    target = 0;
    for (int a : archs) {
      if (a <= cc) target = std::max(target, a);
    }
    if (target == 0) throw CompileError("NVRTC supports no architecture at or below " + arch);
  }
  std::vector<std::string> options{
      "--gpu-architecture=" + std::string(exact ? "sm_" : "compute_") + std::to_string(target), "-std=c++17"};
  for (const Define& d : defines) options.push_back("-D" + d.name + "=" + d.value);
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());

  nvrtcProgram program = nullptr;
  const std::string text(source.text);
  if (lib.nvrtcCreateProgram(&program, text.c_str(), source.name.c_str(), 0, nullptr, nullptr) !=
      NVRTC_SUCCESS) {
    throw CompileError("nvrtcCreateProgram failed for " + source.name);
  }
  const nvrtcResult result = lib.nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
  if (result != NVRTC_SUCCESS) {
    std::size_t size = 0;
    lib.nvrtcGetProgramLogSize(program, &size);
    std::string log(size, '\0');
    lib.nvrtcGetProgramLog(program, log.data());
    lib.nvrtcDestroyProgram(&program);
    throw CompileError(source.name + to_string(defines) + ": " + lib.nvrtcGetErrorString(result) + ": " +
                       std::string(trim(log)).substr(0, 2000));
  }
  NvrtcOutput out;
  out.is_ptx = !exact;
  std::size_t size = 0;
  if (exact) {
    lib.nvrtcGetCUBINSize(program, &size);
    out.image.resize(size);
    lib.nvrtcGetCUBIN(program, out.image.data());
  } else {
    lib.nvrtcGetPTXSize(program, &size);
    out.image.resize(size);
    lib.nvrtcGetPTX(program, out.image.data());
  }
  lib.nvrtcDestroyProgram(&program);
  return out;
}

// Device memory, or mapped page-locked host memory (`host`, which the buffer frees) that the device reaches
// through `ptr`.
// A caller's memory (`owned` false) is never freed.
class CuBuffer final : public DeviceBuffer {
 public:
  CuBuffer(CUdeviceptr ptr, std::size_t bytes, void* host = nullptr, bool owned = true)
      : ptr_(ptr), bytes_(bytes), host_(host), owned_(owned) {}
  CuBuffer(const CuBuffer&) = delete;
  CuBuffer& operator=(const CuBuffer&) = delete;
  ~CuBuffer() override {
    if (!owned_) return;
    if (host_) {
      driver().cuMemFreeHost(host_);
    } else {
      driver().cuMemFree(ptr_);
    }
  }
  std::size_t bytes() const override { return bytes_; }
  CUdeviceptr ptr() const { return ptr_; }

 private:
  CUdeviceptr ptr_;
  std::size_t bytes_;
  void* host_;
  bool owned_;
};

class CuHostBuffer final : public HostBuffer {
 public:
  CuHostBuffer(void* ptr, std::size_t bytes) : ptr_(ptr), bytes_(bytes) {}
  ~CuHostBuffer() override { driver().cuMemFreeHost(ptr_); }
  void* data() override { return ptr_; }
  std::size_t bytes() const override { return bytes_; }

 private:
  void* ptr_;
  std::size_t bytes_;
};

// A pair of events recorded around one operation on the engine's stream.
class CuEvent final : public Event {
 public:
  CuEvent() {
    check(driver().cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate");
    check(driver().cuEventCreate(&end_, CU_EVENT_DEFAULT), "cuEventCreate");
  }
  ~CuEvent() override {
    driver().cuEventDestroy(start_);
    driver().cuEventDestroy(end_);
  }
  double elapsed_ms() override { return between(start_, end_); }
  static double between(CUevent a, CUevent b) {
    const CUresult sync = driver().cuEventSynchronize(b);
    if (sync != CUDA_SUCCESS)
      throw LaunchError("CUDA execution failed: " + driver().describe(sync), sticky(sync));
    float ms = 0;
    check(driver().cuEventElapsedTime(&ms, a, b), "cuEventElapsedTime");
    return ms;
  }
  CUevent start_ = nullptr;
  CUevent end_ = nullptr;
};

class CuProgram final : public Program {
 public:
  CuProgram(CUmodule module, std::string image) : module_(module), image_(std::move(image)) {}
  const std::string& image() const { return image_; }
  ~CuProgram() override { driver().cuModuleUnload(module_); }
  CUfunction function(const std::string& name) const {
    if (const auto it = functions_.find(name); it != functions_.end()) return it->second;
    CUfunction f = nullptr;
    const CUresult r = driver().cuModuleGetFunction(&f, module_, name.c_str());
    if (r != CUDA_SUCCESS)
      throw LaunchError("cuModuleGetFunction(" + name + "): " + driver().describe(r) +
                        " (a CUDA C++ kernel is found by its name: declare it extern \"C\")");
    functions_[name] = f;
    return f;
  }

 private:
  CUmodule module_;
  std::string image_;
  mutable std::map<std::string, CUfunction> functions_;
};

class CudaEngine final : public Engine {
 public:
  CudaEngine(const DeviceInfo& info, int ordinal) : info_(info) {
    check(driver().cuDeviceGet(&device_, ordinal), "cuDeviceGet");
    check(driver().cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    check(driver().cuCtxSetCurrent(context_), "cuCtxSetCurrent");
    check(driver().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  }
  // On an application's context and stream, which stay the application's.
  CudaEngine(const DeviceInfo& info, CUdevice device, CUcontext context, CUstream stream)
      : info_(info), device_(device), context_(context), stream_(stream), owned_(false) {
    check(driver().cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  }
  ~CudaEngine() override {
    release_programs();
    driver().cuStreamSynchronize(stream_);
    if (!owned_) return;
    driver().cuStreamDestroy(stream_);
    driver().cuDevicePrimaryCtxRelease(device_);
  }

  const DeviceInfo& device() const override { return info_; }
  NativeObjects native_objects() const override { return {context_, nullptr, stream_}; }

  std::unique_ptr<DeviceBuffer> borrow(std::uint64_t handle, std::size_t bytes) override {
    if (!handle) throw UsageError("a null CUDA device pointer");
    return std::make_unique<CuBuffer>(static_cast<CUdeviceptr>(handle), bytes, nullptr, false);
  }
  std::uint64_t handle(const DeviceBuffer& buffer) const override { return ptr(buffer); }

  std::unique_ptr<DeviceBuffer> allocate_device(std::size_t bytes) override {
    CUdeviceptr ptr = 0;
    const CUresult r = driver().cuMemAlloc(&ptr, std::max<std::size_t>(bytes, 256));
    if (r != CUDA_SUCCESS) allocation_failed(bytes, "device", driver().describe(r));
    return std::make_unique<CuBuffer>(ptr, bytes);
  }

  std::unique_ptr<HostBuffer> allocate_host(std::size_t bytes) override {
    void* ptr = nullptr;
    if (driver().cuMemHostAlloc(&ptr, std::max<std::size_t>(bytes, 64), 0) == CUDA_SUCCESS) {
      return std::make_unique<CuHostBuffer>(ptr, bytes);
    }
    return allocate_pageable(bytes);
  }

  std::unique_ptr<DeviceBuffer> allocate_mapped(std::size_t bytes) override {
    void* host = nullptr;
    CUresult r = driver().cuMemHostAlloc(&host, std::max<std::size_t>(bytes, 256), CU_MEMHOSTALLOC_DEVICEMAP);
    if (r != CUDA_SUCCESS) allocation_failed(bytes, "mapped host", driver().describe(r));
    CUdeviceptr ptr = 0;
    r = driver().cuMemHostGetDevicePointer(&ptr, host, 0);
    if (r != CUDA_SUCCESS) {
      driver().cuMemFreeHost(host);
      allocation_failed(bytes, "mapped host", driver().describe(r));
    }
    return std::make_unique<CuBuffer>(ptr, bytes, host);
  }

  EventPtr upload(DeviceBuffer& dst, std::size_t dst_offset, HostBuffer& src, std::size_t bytes) override {
    return timed(
        [&] { return driver().cuMemcpyHtoDAsync(ptr(dst) + dst_offset, src.data(), bytes, stream_); },
        "cuMemcpyHtoDAsync");
  }

  EventPtr download(HostBuffer& dst, const DeviceBuffer& src, std::size_t bytes,
                    std::size_t src_offset) override {
    return timed(
        [&] { return driver().cuMemcpyDtoHAsync(dst.data(), ptr(src) + src_offset, bytes, stream_); },
        "cuMemcpyDtoHAsync");
  }

  EventPtr fill(DeviceBuffer& dst, std::uint32_t pattern, std::size_t offset, std::size_t bytes) override {
    return timed([&] { return driver().cuMemsetD32Async(ptr(dst) + offset, pattern, bytes / 4, stream_); },
                 "cuMemsetD32Async");
  }

  EventPtr copy(DeviceBuffer& dst, const DeviceBuffer& src, std::size_t bytes) override {
    return timed([&] { return driver().cuMemcpyDtoDAsync(ptr(dst), ptr(src), bytes, stream_); },
                 "cuMemcpyDtoDAsync");
  }

  EventPtr launch(const Program& program, const std::string& kernel, const LaunchShape& shape,
                  const std::vector<KernelArg>& args) override {
    CUfunction f = static_cast<const CuProgram&>(program).function(kernel);
    std::uint64_t local = shape.local;
    if (local == 0) local = driver_choice(f, shape.global);
    if (local == 0 || shape.global % local != 0) {
      throw LaunchError("CUDA grids are whole blocks: " + std::to_string(shape.global) +
                        " threads are not a multiple of the block size " + std::to_string(local));
    }
    std::vector<CUdeviceptr> pointers(args.size());
    std::vector<void*> params(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (args[i].buffer) {
        pointers[i] = ptr(*args[i].buffer);
        params[i] = &pointers[i];
      } else {
        params[i] = const_cast<unsigned char*>(args[i].bytes.data());
      }
    }
    const auto blocks = static_cast<unsigned>(shape.global / local);
    auto event = std::make_unique<CuEvent>();
    check(driver().cuEventRecord(event->start_, stream_), "cuEventRecord");
    const CUresult r = driver().cuLaunchKernel(f, blocks, 1, 1, static_cast<unsigned>(local), 1, 1, 0,
                                               stream_, params.data(), nullptr);
    if (r != CUDA_SUCCESS) {
      throw LaunchError("cuLaunchKernel(" + kernel + ", " + std::to_string(blocks) + " x " +
                            std::to_string(local) + "): " + driver().describe(r),
                        sticky(r));
    }
    check(driver().cuEventRecord(event->end_, stream_), "cuEventRecord");
    return event;
  }

  EventPtr call_native(const std::string& what, const std::function<int(void* stream)>& call) override {
    const varex_vendor_table* vendor = vendor_library();
    if (!vendor) return Engine::call_native(what, call);
    auto event = std::make_unique<CuEvent>();
    check(driver().cuEventRecord(event->start_, stream_), "cuEventRecord");
    const int status = call(stream_);
    if (status != 0) {
      throw LaunchError(what + " (" + vendor->name + "): " + vendor->error_string(status),
                        vendor->sticky(status) != 0);
    }
    check(driver().cuEventRecord(event->end_, stream_), "cuEventRecord");
    return event;
  }

  void* native_address(const DeviceBuffer& buffer) const override {
    return reinterpret_cast<void*>(static_cast<std::uintptr_t>(ptr(buffer)));
  }

  double span_ms(Event& first, Event& last) override {
    return CuEvent::between(static_cast<CuEvent&>(first).start_, static_cast<CuEvent&>(last).end_);
  }

  void finish() override {
    const CUresult r = driver().cuStreamSynchronize(stream_);
    if (r != CUDA_SUCCESS) throw LaunchError("CUDA stream failed: " + driver().describe(r), sticky(r));
  }

  // A sticky error answers every later call of the context, whatever its code: the context is asked
  // directly, and an event (what every timed call makes first) must still be made.
  bool usable() override {
    if (driver().cuCtxSetCurrent(context_) != CUDA_SUCCESS) return false;
    if (driver().cuCtxSynchronize() != CUDA_SUCCESS) return false;
    CUevent probe = nullptr;
    if (driver().cuEventCreate(&probe, CU_EVENT_DEFAULT) != CUDA_SUCCESS) return false;
    driver().cuEventDestroy(probe);
    return true;
  }

 protected:
  std::unique_ptr<Program> build(const KernelSource& source, const Defines& defines) override {
    const NvrtcOutput out = run_nvrtc(source, defines, info_.arch);
    auto program = load(out.image);
    if (!program) throw CompileError("cuModuleLoadData(" + source.name + ") failed");
    return program;
  }

  std::string binary(const Program& program) override {
    return static_cast<const CuProgram&>(program).image();
  }

  std::unique_ptr<Program> load(const std::string& image) override {
    // Builds may run on a background thread, which has no current context of its own.
    if (driver().cuCtxSetCurrent(context_) != CUDA_SUCCESS) return nullptr;
    CUmodule module = nullptr;
    if (driver().cuModuleLoadData(&module, image.data()) != CUDA_SUCCESS) return nullptr;
    return std::make_unique<CuProgram>(module, image);
  }

 private:
  static CUdeviceptr ptr(const DeviceBuffer& b) { return static_cast<const CuBuffer&>(b).ptr(); }

  // CUDA has no "let the driver choose": do what OpenCL drivers do with a NULL local size and take the
  // largest block size the kernel allows that divides the global size.
  static std::uint64_t driver_choice(CUfunction f, std::uint64_t global) {
    int limit = 0;
    driver().cuFuncGetAttribute(&limit, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f);
    for (std::uint64_t l = std::min<std::uint64_t>(limit > 0 ? limit : 1024, global); l >= 1; --l) {
      if (global % l == 0) return l;
    }
    return 0;
  }

  template <typename Op>
  EventPtr timed(Op op, const char* what) {
    auto event = std::make_unique<CuEvent>();
    check(driver().cuEventRecord(event->start_, stream_), "cuEventRecord");
    check(op(), what);
    check(driver().cuEventRecord(event->end_, stream_), "cuEventRecord");
    return event;
  }

  DeviceInfo info_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  bool owned_ = true;  // the primary context retained and the stream created here
};

}  // namespace

std::vector<DeviceInfo> enumerate_cuda_devices() {
  const CudaDriver* d = CudaDriver::get();
  if (!d) return {};
  int count = 0;
  if (d->cuDeviceGetCount(&count) != CUDA_SUCCESS) return {};
  int version = 0;
  d->cuDriverGetVersion(&version);
  std::vector<DeviceInfo> out;
  for (int i = 0; i < count; ++i) {
    CUdevice device = 0;
    if (d->cuDeviceGet(&device, i) != CUDA_SUCCESS) continue;
    DeviceInfo info;
    info.id = "cuda:" + std::to_string(i);
    info.backend = Backend::Cuda;
    char name[256] = {};
    d->cuDeviceGetName(name, sizeof name - 1, device);
    info.name = name;
    info.vendor = "NVIDIA Corporation";
    info.platform = "CUDA";
    info.driver = std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
    info.type = "gpu";
    info.arch = "sm_" + std::to_string(attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)) +
                std::to_string(attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
    info.compute_units = attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    std::size_t total = 0;
    d->cuDeviceTotalMem(&total, device);
    info.global_mem = total;
    info.max_alloc = total;
    info.local_mem = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    info.cache_bytes = attribute(device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    info.max_work_group = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    char bus_id[64] = {};
    if (d->cuDeviceGetPCIBusId(bus_id, sizeof bus_id - 1, device) == CUDA_SUCCESS)
      info.pci = normalize_pci(bus_id);
    CUuuid uuid{};
    if (d->cuDeviceGetUuid(&uuid, device) == CUDA_SUCCESS) {
      unsigned char bytes[16];
      std::memcpy(bytes, uuid.bytes, sizeof bytes);
      info.uuid = format_uuid(bytes);
    }
    info.host = host_name();
    out.push_back(info);
  }
  return out;
}

std::unique_ptr<Engine> open_cuda_engine(const DeviceInfo& info) {
  const int ordinal = static_cast<int>(parse_int(info.id.substr(5), "CUDA device"));
  return std::make_unique<CudaEngine>(info, ordinal);
}

std::unique_ptr<Engine> attach_cuda_engine(void* context, void* stream) {
  if (!context) throw UsageError("a CUDA context is needed");
  const CudaDriver& d = driver();
  auto* ctx = static_cast<CUcontext>(context);
  check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  CUdevice device = 0;
  check(d.cuCtxGetDevice(&device), "cuCtxGetDevice");
  for (const DeviceInfo& info : enumerate_cuda_devices()) {
    CUdevice candidate = 0;
    if (d.cuDeviceGet(&candidate, static_cast<int>(parse_int(info.id.substr(5), "CUDA device"))) ==
            CUDA_SUCCESS &&
        candidate == device)
      return std::make_unique<CudaEngine>(info, device, ctx, static_cast<CUstream>(stream));
  }
  throw RuntimeError("the CUDA context's device is not among the driver's devices");
}

std::size_t compile_cuda_offline(const KernelSource& source, const Defines& defines,
                                 const std::string& arch) {
  return run_nvrtc(source, defines, arch).image.size();
}

}  // namespace varex::harness
