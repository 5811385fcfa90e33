#include "harness/primitives/launcher.hpp"

namespace varex::harness::primitives {

namespace {
void add(Timings& timings, const std::string& kernel, double ms) {
  for (KernelTiming& t : timings) {
    if (t.kernel == kernel) {
      t.ms += ms;
      return;
    }
  }
  timings.push_back({kernel, ms});
}
}  // namespace

Launcher timed(Engine& engine, const Program& program, Timings& timings) {
  Launcher l;
  l.launch = [&engine, &program, &timings](const std::string& kernel, const LaunchShape& shape,
                                           const std::vector<KernelArg>& args) {
    if (shape.global == 0) return;
    add(timings, kernel, engine.launch(program, kernel, shape, args)->elapsed_ms());
  };
  l.fill = [&engine, &timings](DeviceBuffer& buffer, std::uint32_t pattern, std::size_t bytes) {
    if (bytes) add(timings, "fill", engine.fill(buffer, pattern, 0, bytes)->elapsed_ms());
  };
  return l;
}

const Program& primitives_program(Engine& engine, const Defines& defines) {
  return engine.compile(kernel_source(engine.device().backend, "primitives"), defines);
}

}  // namespace varex::harness::primitives
