#include "base/process.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "base/device.hpp"
#include "base/text.hpp"

namespace varex {

namespace {

// Field 22 of /proc/PID/stat: the start time in clock ticks since boot; empty when there is no such process.
std::string start_time(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!in || !std::getline(in, text)) return "";
  // The command name (field 2) is in parentheses and may hold spaces: count fields after its last ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 22) return field;
  }
  return "";
}

}  // namespace

std::string process_token() {
  const long pid = static_cast<long>(::getpid());
  return host_name() + " " + std::to_string(pid) + " " + start_time(pid);
}

bool token_alive(const std::string& token, double seconds_since_heartbeat, double lease_seconds) {
  const auto parts = split(token, ' ');
  if (parts.size() != 3) return false;
  if (parts[0] != host_name()) return seconds_since_heartbeat < lease_seconds;
  long pid = 0;
  try {
    pid = std::stol(parts[1]);
  } catch (const std::exception&) {
    return false;
  }
  return pid > 0 && !parts[2].empty() && start_time(pid) == parts[2];
}

std::string describe_token(const std::string& token) {
  const auto parts = split(token, ' ');
  if (parts.size() != 3) return "an unknown process";
  return "pid " + parts[1] + " on " + parts[0];
}

namespace {
const std::chrono::steady_clock::time_point started_at = std::chrono::steady_clock::now();
}  // namespace

std::chrono::steady_clock::time_point process_started() {
  return started_at;
}

}  // namespace varex
