#include "harness/kernel_source.hpp"

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>

#include "base/hash.hpp"

namespace varex::harness {

namespace {

std::optional<std::string_view> embedded_file(std::string_view name) {
  for (std::size_t i = 0; i < embedded::kFileCount; ++i) {
    if (name == embedded::kFiles[i].name) return embedded::kFiles[i].text;
  }
  return std::nullopt;
}

// Kernel compilers get one string and no include path: the embedder's files stand in for the disk.
void append_resolved(std::string_view text, std::set<std::string>& seen, std::string& out) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end == std::string_view::npos ? text.size() : end + 1);
    text.remove_prefix(line.size());
    const std::size_t directive = line.find_first_not_of(" \t");
    if (directive != std::string_view::npos && line.substr(directive).starts_with("#include \"")) {
      const std::string_view rest = line.substr(directive + 10);
      const std::string name(rest.substr(0, rest.find('"')));
      const auto file = embedded_file(name);
      if (!file) throw std::logic_error("kernel include \"" + name + "\" was not embedded");
      if (seen.insert(name).second) append_resolved(*file, seen, out);
      out += '\n';
      continue;
    }
    out += line;
  }
}

}  // namespace

std::string resolve_includes(std::string_view text) {
  std::set<std::string> seen;
  std::string out;
  append_resolved(text, seen, out);
  return out;
}

namespace {

struct Sources {
  std::mutex mutex;
  std::map<std::string, KernelSource> by_name;
};

Sources& sources() {
  static Sources s;
  return s;
}

// A user's file with its includes inlined and #line markers, so that the compilers' messages name the user's
// file and its lines (and varex's headers by their names), not the lines of the text they were given.
std::string resolve_with_lines(std::string_view text, const std::string& file) {
  std::set<std::string> seen;
  std::string out = "#line 1 \"" + file + "\"\n";
  std::size_t number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end == std::string_view::npos ? text.size() : end + 1);
    text.remove_prefix(line.size());
    ++number;
    const std::size_t directive = line.find_first_not_of(" \t");
    if (directive == std::string_view::npos || !line.substr(directive).starts_with("#include \"")) {
      out += line;
      continue;
    }
    const std::string_view rest = line.substr(directive + 10);
    const std::string name(rest.substr(0, rest.find('"')));
    const auto header = embedded_file(name);
    if (!header) throw std::logic_error("kernel include \"" + name + "\" was not embedded");
    if (seen.insert(name).second) {
      out += "#line 1 \"" + name + "\"\n";
      append_resolved(*header, seen, out);
      if (!out.empty() && out.back() != '\n') out += '\n';
    }
    out += "#line " + std::to_string(number + 1) + " \"" + file + "\"\n";
  }
  return out;
}

KernelSource resolved_source(std::string name, std::string_view text, const std::string& file = {}) {
  std::string resolved = file.empty() ? resolve_includes(text) : resolve_with_lines(text, file);
  std::string hash = hex64(fnv1a(resolved));
  return KernelSource{std::move(name), std::move(resolved), std::move(hash)};
}

}  // namespace

// One source serves both backends (kernels/common/portable.h); the backend stays in the signature for
// callers.
const KernelSource& kernel_source(Backend, std::string_view family) {
  Sources& s = sources();
  const std::string name = std::string(family) + ".cl";
  std::lock_guard lock(s.mutex);
  if (const auto it = s.by_name.find(name); it != s.by_name.end()) return it->second;
  const auto text = embedded_file(name);
  if (!text) throw std::logic_error("no kernel source " + name + " was embedded");
  return s.by_name.emplace(name, resolved_source(name, *text)).first->second;
}

const KernelSource& add_kernel_source(std::string_view family, std::string_view text,
                                      const std::string& file) {
  Sources& s = sources();
  const std::string name = std::string(family) + ".cl";
  KernelSource source = resolved_source(name, text, file);
  std::lock_guard lock(s.mutex);
  if (embedded_file(name) || s.by_name.count(name))
    throw std::logic_error("kernel source " + name + " is there already");
  return s.by_name.emplace(name, std::move(source)).first->second;
}

}  // namespace varex::harness
