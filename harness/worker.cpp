#include "harness/worker.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "base/errors.hpp"
#include "base/interrupt.hpp"
#include "harness/fault_injection.hpp"

extern char** environ;

namespace varex::harness {

namespace {

std::vector<std::string>& startup_environment() {
  static std::vector<std::string> saved;
  return saved;
}

constexpr int kWorkerIn = 3;   // the worker reads requests here
constexpr int kWorkerOut = 4;  // and writes answers here

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads up to the next newline; nullopt at end of input.
std::optional<std::string> read_line(int fd, std::string& buffer) {
  while (true) {
    if (const auto nl = buffer.find('\n'); nl != std::string::npos) {
      std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      return line;
    }
    char chunk[65536];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    buffer.append(chunk, static_cast<std::size_t>(n));
  }
}

// State the worker keeps between requests.
class WorkerState {
 public:
  nlohmann::json handle(const nlohmann::json& request) {
    const std::string cmd = request.at("cmd").get<std::string>();
    if (cmd == "probe") {
      Engine& e = engine(DeviceInfo::from_json(request.at("device")));
      const ProbeResult p = probe_bandwidth(e);
      return {{"ok", true}, {"probe", {{"gbps", p.gbps}, {"method", p.method}, {"details", p.details}}}};
    }
    if (cmd == "prepare") {
      PreparedRun& run = prepared(request);
      const Digest d = run.reference();
      return {{"ok", true},
              {"h2d_ms", run.h2d_ms()},
              {"reference", {{"rows", d.rows}, {"checksum", d.checksum}}}};
    }
    if (cmd == "measure") return measure(request);
    throw UsageError("worker: unknown request '" + cmd + "'");
  }

 private:
  // One variant: its measurement, failed or not. Whatever fails while it is measured is that variant's
  // failure; a device left unusable by it (a sticky CUDA error, whatever its code) is reported with the
  // measurement, and the worker then exits so that a new one makes a new context, buffers and workload.
  nlohmann::json measure(const nlohmann::json& request) {
    Measurement m;
    bool sticky = false;
    try {
      m = measure_variant(request);
    } catch (const UsageError&) {
      throw;
    } catch (const LaunchError& e) {  // a sticky error: measure() lets only those through
      m.status = Status::LaunchError;
      m.error = e.what();
      sticky = true;
    } catch (const std::exception& e) {
      m.status = Status::LaunchError;
      m.error = std::string("the device failed around the variant: ") + e.what();
    }
    restore_ = !m.ok();
    const bool replace =
        sticky || (!m.ok() && (!engine_ || spoiled_by_injected_fault() || !engine_->usable()));
    return {{"ok", true}, {"measurement", m.to_json()}, {"exit", replace}};
  }

  Measurement measure_variant(const nlohmann::json& request) {
    // What a spoiled device does to every call after the failure (VAREX_INJECT_FAULT=spoil's stand-in).
    if (spoiled_by_injected_fault()) throw RuntimeError("injected fault: the device is unusable");
    PreparedRun& run = prepared(request);
    if (restore_) run.restore_inputs();
    // Programs of the variants that come next compile while this one is measured.
    const KernelSource& source =
        kernel_source(engine_->device().backend,
                      find_operator(request.at("workload").at("op").get<std::string>()).kernel_family());
    for (const auto& defines : request.value("prefetch", nlohmann::json::array())) {
      Defines d;
      for (const auto& x : defines) d.push_back({x.at(0).get<std::string>(), x.at(1).get<std::string>()});
      engine_->prefetch(source, d);
    }
    const auto params = variants::params_from_json(request.at("params"));
    return harness::measure(*engine_, run, params, MeasureSettings::from_json(request.at("settings")),
                            request.value("probe_gbps", 0.0));
  }

  Engine& engine(const DeviceInfo& device) {
    if (!engine_ || engine_->device().id != device.id) {
      run_.reset();
      engine_.reset();
      engine_ = open_engine(device);
    }
    return *engine_;
  }

  PreparedRun& prepared(const nlohmann::json& request) {
    const DeviceInfo device = DeviceInfo::from_json(request.at("device"));
    const auto spec = datasets::WorkloadSpec::from_json(request.at("workload"));
    const std::string key = device.id + "|" + spec.id();
    if (!run_ || key != run_key_) {
      run_.reset();
      Engine& e = engine(device);
      run_ = find_operator(spec.op).prepare(e, spec);
      run_key_ = key;
      restore_ = false;
    }
    return *run_;
  }

  std::unique_ptr<Engine> engine_;
  std::unique_ptr<PreparedRun> run_;
  std::string run_key_;
  bool restore_ = false;
};

}  // namespace

void save_startup_environment() {
  auto& saved = startup_environment();
  saved.clear();
  for (char** e = environ; *e; ++e) saved.emplace_back(*e);
}

int worker_main(int in_fd, int out_fd, long parent) {
  // A worker never outlives the process that started it, whatever killed that one (kill -9 included):
  // the kernel sends SIGKILL when the parent's thread that spawned it ends. A parent gone before this
  // line ran is caught by the pid check.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (parent > 0 && ::getppid() != parent) return 1;
  WorkerState state;
  std::string buffer;
  while (const auto line = read_line(in_fd, buffer)) {
    nlohmann::json answer;
    bool exit_after = false;
    try {
      answer = state.handle(nlohmann::json::parse(*line));
      exit_after = answer.value("exit", false);
    } catch (const LaunchError& e) {
      // Only fatal launch errors escape measure(): the context is gone, so report and make way.
      Measurement m;
      m.status = Status::LaunchError;
      m.error = e.what();
      answer = {{"ok", true}, {"measurement", m.to_json()}, {"exit", true}};
      exit_after = true;
    } catch (const UsageError& e) {
      answer = {{"ok", false}, {"usage", true}, {"error", e.what()}};
    } catch (const std::exception& e) {
      answer = {{"ok", false}, {"usage", false}, {"error", e.what()}};
    }
    if (!write_all(out_fd, answer.dump() + "\n") || exit_after) return exit_after ? 3 : 1;
  }
  return 0;
}

WorkerClient::WorkerClient(std::string executable) : executable_(std::move(executable)) {
  // Writing to a worker that has just died must fail with EPIPE, not kill this process.
  signal(SIGPIPE, SIG_IGN);
}

WorkerClient::~WorkerClient() {
  stop();
}

void WorkerClient::start() {
  int to[2], from[2];
  if (pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0)
    throw RuntimeError("cannot create pipes for a worker");
  // Keep the pipe ends clear of the fixed descriptors 3 and 4 they are moved to in the child.
  for (int* fd : {&to[0], &to[1], &from[0], &from[1]}) {
    const int moved = fcntl(*fd, F_DUPFD_CLOEXEC, 10);
    ::close(*fd);
    *fd = moved;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to[0], kWorkerIn);
  posix_spawn_file_actions_adddup2(&actions, from[1], kWorkerOut);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO,
                                   STDOUT_FILENO);  // driver chatter stays off stdout
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // Its own process group: Ctrl-C reaches the parent, which then ends the worker itself.
  posix_spawnattr_setpgroup(&attributes, 0);
  // The parent ignores SIGPIPE; the worker starts with default signal handling.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  std::string arg0 = executable_, arg1 = "__worker", arg2 = std::to_string(::getpid());
  char* argv[] = {arg0.data(), arg1.data(), arg2.data(), nullptr};
  std::vector<char*> env;
  for (std::string& e : startup_environment()) env.push_back(e.data());
  env.push_back(nullptr);
  const int rc = posix_spawn(&pid_, executable_.c_str(), &actions, &attributes, argv,
                             startup_environment().empty() ? environ : env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(to[0]);
  ::close(from[1]);
  if (rc != 0) {
    ::close(to[1]);
    ::close(from[0]);
    pid_ = -1;
    throw RuntimeError("cannot start worker " + executable_ + ": " + std::strerror(rc));
  }
  to_child_ = to[1];
  from_child_ = from[0];
  buffer_.clear();
}

void WorkerClient::stop() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);  // the worker's whole process group: nothing it started outlives it
  ::kill(pid_, SIGKILL);
  reap();
}

nlohmann::json WorkerClient::request(const nlohmann::json& message, double timeout_seconds) {
  if (pid_ <= 0) start();
  if (!write_all(to_child_, message.dump() + "\n")) throw WorkerCrashed(reap());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  while (true) {
    if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
      const std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      nlohmann::json answer = nlohmann::json::parse(line);
      // A worker whose device is no longer usable answers, then exits: the next request starts a new one
      // rather than finding it gone (which would fail the next variant).
      if (answer.value("exit", false)) stop();
      if (!answer.value("ok", false)) {
        const std::string error = answer.value("error", "worker failed");
        if (answer.value("usage", false)) throw UsageError(error);
        throw RuntimeError(error);
      }
      return answer;
    }
    if (interrupted()) {
      stop();
      throw Interrupted();
    }
    const auto left =
        std::chrono::duration<double, std::milli>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      stop();
      throw WorkerTimeout("no answer within " + std::to_string(static_cast<long>(timeout_seconds)) + " s");
    }
    pollfd p{from_child_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min(left, 200.0)) + 1);
    if (ready < 0 && errno != EINTR) throw RuntimeError(std::string("poll: ") + std::strerror(errno));
    if (ready <= 0) continue;
    char chunk[65536];
    const ssize_t n = ::read(from_child_, chunk, sizeof chunk);
    if (n > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    // End of output: the worker is gone.
    throw WorkerCrashed(reap());
  }
}

std::string WorkerClient::reap() {
  int status = 0;
  ::close(to_child_);
  ::close(from_child_);
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  to_child_ = from_child_ = -1;
  if (WIFSIGNALED(status))
    return std::string("the worker process was killed by signal ") + strsignal(WTERMSIG(status));
  return "the worker process exited with status " + std::to_string(WEXITSTATUS(status));
}

namespace {

nlohmann::json prefetch_json(const std::vector<Defines>& prefetch) {
  nlohmann::json out = nlohmann::json::array();
  for (const Defines& defines : prefetch) {
    nlohmann::json d = nlohmann::json::array();
    for (const Define& x : defines) d.push_back({x.name, x.value});
    out.push_back(d);
  }
  return out;
}

}  // namespace

RemoteDevice::RemoteDevice(std::string executable, DeviceInfo device)
    : device_(std::move(device)), client_(std::move(executable)) {}

ProbeResult RemoteDevice::probe(double timeout_seconds) {
  const auto answer = client_.request({{"cmd", "probe"}, {"device", device_.to_json()}}, timeout_seconds);
  const auto& p = answer.at("probe");
  return {p.at("gbps").get<double>(), p.at("method").get<std::string>(), p.at("details")};
}

Digest RemoteDevice::prepare(const datasets::WorkloadSpec& spec, double timeout_seconds) {
  const auto start = std::chrono::steady_clock::now();
  const auto answer = client_.request(
      {{"cmd", "prepare"}, {"device", device_.to_json()}, {"workload", spec.to_json()}}, timeout_seconds);
  prepared_ = spec.id();
  prepare_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {answer.at("reference").at("rows").get<std::uint64_t>(),
          answer.at("reference").at("checksum").get<std::uint64_t>()};
}

Measurement RemoteDevice::measure(const datasets::WorkloadSpec& spec, const variants::Params& params,
                                  const MeasureSettings& settings, double probe_gbps, double timeout_seconds,
                                  const std::vector<Defines>& prefetch) {
  const nlohmann::json request{{"cmd", "measure"},
                               {"device", device_.to_json()},
                               {"workload", spec.to_json()},
                               {"params", variants::to_json(params)},
                               {"settings", settings.to_json()},
                               {"probe_gbps", probe_gbps},
                               {"prefetch", prefetch_json(prefetch)}};
  // A replaced worker prepares the workload again, under the preparation's own time limit.
  if (!holds(spec)) prepare(spec);
  Measurement m;
  try {
    return Measurement::from_json(client_.request(request, timeout_seconds).at("measurement"));
  } catch (const WorkerTimeout& e) {
    m.status = Status::Timeout;
    m.error = std::string("the variant did not finish: ") + e.what();
  } catch (const WorkerCrashed& e) {
    m.status = Status::LaunchError;
    m.error = e.what();
  }
  return m;
}

}  // namespace varex::harness
