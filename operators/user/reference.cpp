#include "operators/user/reference.hpp"

#include <dlfcn.h>
#include <stdlib.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "base/command.hpp"
#include "base/errors.hpp"
#include "base/text.hpp"

namespace varex::operators::user {

namespace {

// A directory of its own for one call, removed with everything in it when the call ends.
class ScratchDirectory {
 public:
  ScratchDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "varex-reference-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw RuntimeError("cannot make a directory for the reference's files");
    path_ = pattern;
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

void write_words(const std::filesystem::path& path, const std::vector<std::uint32_t>& words) {
  std::ofstream out(path, std::ios::binary);
  // Little-endian on every machine varex builds for (x86-64, and the CUDA and OpenCL hosts it runs on).
  out.write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(words.size() * 4));
  if (!out) throw RuntimeError("cannot write " + path.string());
}

// The command's words, each that names a file of the operator's directory made absolute, so that
// ["python3", "reference.py"] runs the directory's script wherever varex runs.
std::vector<std::string> command_words(const Declaration& d) {
  std::vector<std::string> words;
  for (const std::string& w : d.reference.command) {
    const std::filesystem::path local = d.dir / w;
    std::error_code error;
    words.push_back(!w.empty() && w[0] != '-' && std::filesystem::is_regular_file(local, error)
                        ? std::filesystem::absolute(local).string()
                        : w);
  }
  return words;
}

std::string where(const Declaration& d) {
  return (d.dir / "operator.json").string() + ": ";
}

// The command, with --rows, the parameters, each input's file and each output's file appended.
std::vector<std::vector<std::uint32_t>> run_reference_command(
    const Declaration& d, const std::vector<std::vector<std::uint32_t>>& inputs,
    const datasets::WorkloadSpec& spec, const std::vector<std::uint64_t>& output_elements) {
  const ScratchDirectory scratch;
  std::vector<std::string> argv = command_words(d);
  argv.insert(argv.end(), {"--rows", std::to_string(spec.rows())});
  for (const ParameterDecl& p : d.parameters)
    argv.insert(argv.end(), {"--" + p.name, std::to_string(spec.params.at(p.name).get<std::int64_t>())});
  for (std::size_t i = 0; i < d.inputs.size(); ++i) {
    const std::filesystem::path file = scratch.path() / (d.inputs[i].name + ".bin");
    write_words(file, inputs[i]);
    argv.insert(argv.end(), {"--" + d.inputs[i].name, file.string()});
  }
  for (const BufferDecl& o : d.outputs)
    argv.insert(argv.end(), {"--" + o.name, (scratch.path() / (o.name + ".bin")).string()});
  const std::string what = where(d) + "reference command '" + join(d.reference.command, " ") + "'";
  const CommandResult r = run_command(argv);
  if (!r.ok())
    throw UsageError(what + " failed (status " + std::to_string(r.status) + "): " + r.first_line());
  std::vector<std::vector<std::uint32_t>> outputs;
  for (std::size_t o = 0; o < d.outputs.size(); ++o) {
    const std::filesystem::path out = scratch.path() / (d.outputs[o].name + ".bin");
    std::ifstream in(out, std::ios::binary);
    if (!in) throw UsageError(what + " wrote no " + out.filename().string());
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() != output_elements[o] * 4)
      throw UsageError(what + " wrote " + std::to_string(bytes.size()) + " bytes of '" + d.outputs[o].name +
                       "', expected " + std::to_string(output_elements[o] * 4) + " (" +
                       std::to_string(output_elements[o]) + " elements of 4 bytes)");
    std::vector<std::uint32_t> words(output_elements[o]);
    if (!bytes.empty()) std::memcpy(words.data(), bytes.data(), bytes.size());
    outputs.push_back(std::move(words));
  }
  return outputs;
}

// The library's function, loaded once per process and never unloaded (a library's static destructors may
// run at exit only).
using Word = std::uint64_t;

void* reference_function(const Declaration& d) {
  const std::filesystem::path library = std::filesystem::absolute(d.dir / d.reference.library);
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    throw UsageError(
        where(d) + "'reference.library': cannot load " + library.string() + " (the user builds it, " +
        "as a C reference's comment says: cc -O2 -shared -fPIC …): " + (why ? why : "unknown error"));
  }
  ::dlerror();
  void* f = ::dlsym(handle, d.reference.function.c_str());
  if (!f)
    throw UsageError(where(d) + "'reference.function': " + library.string() + " has no function '" +
                     d.reference.function + "' (a C function: extern \"C\" in C++)");
  return f;
}

// Calls `f` with `args` as its arguments. Every argument is a pointer or an int64_t: on the ABIs varex builds
// for (x86-64 System V, AArch64) both are passed as one 64-bit integer, in a register or one stack slot, so
// the call by the number of arguments is the call the function's own declaration makes.
int call_with(void* f, const std::vector<Word>& a) {
  const auto as = [f]<typename... W>(W... words) { return reinterpret_cast<int (*)(W...)>(f)(words...); };
  static_assert(kMostReferenceArgs == 12, "one case per number of arguments");
  switch (a.size()) {
    case 0:
      return as();
    case 1:
      return as(a[0]);
    case 2:
      return as(a[0], a[1]);
    case 3:
      return as(a[0], a[1], a[2]);
    case 4:
      return as(a[0], a[1], a[2], a[3]);
    case 5:
      return as(a[0], a[1], a[2], a[3], a[4]);
    case 6:
      return as(a[0], a[1], a[2], a[3], a[4], a[5]);
    case 7:
      return as(a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
    case 8:
      return as(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
    case 9:
      return as(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]);
    case 10:
      return as(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]);
    case 11:
      return as(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]);
    case 12:
      return as(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]);
  }
  throw std::logic_error("too many reference arguments");
}

std::vector<std::vector<std::uint32_t>> call_reference_function(
    const Declaration& d, const std::vector<std::vector<std::uint32_t>>& inputs,
    const std::vector<Value>& workload, const std::vector<std::uint64_t>& output_elements) {
  void* f = reference_function(d);
  // Each output starts as its clear word (0 without one), as the kernels' output does.
  std::vector<std::vector<std::uint32_t>> outputs;
  for (std::size_t o = 0; o < d.outputs.size(); ++o)
    outputs.emplace_back(std::max<std::uint64_t>(output_elements[o], 1), d.outputs[o].clear.value_or(0));
  std::vector<std::vector<std::uint32_t>> in_copies =
      inputs;  // the function may not write the inputs we compare with
  std::vector<Word> args;
  for (const ArgDecl& a : d.reference.args) {
    if (a.buffer.empty()) {
      args.push_back(static_cast<Word>(a.value->integer(workload)));
      continue;
    }
    for (std::size_t i = 0; i < d.inputs.size(); ++i) {
      if (d.inputs[i].name == a.buffer) {
        if (in_copies[i].empty()) in_copies[i].resize(1);
        args.push_back(reinterpret_cast<Word>(in_copies[i].data()));
      }
    }
    for (std::size_t o = 0; o < d.outputs.size(); ++o) {
      if (d.outputs[o].name == a.buffer) args.push_back(reinterpret_cast<Word>(outputs[o].data()));
    }
  }
  const int status = call_with(f, args);
  if (status != 0)
    throw UsageError(where(d) + "reference function '" + d.reference.function + "' returned " +
                     std::to_string(status));
  for (std::size_t o = 0; o < d.outputs.size(); ++o) outputs[o].resize(output_elements[o]);
  return outputs;
}

}  // namespace

std::vector<std::vector<std::uint32_t>> reference_outputs(
    const Declaration& d, const std::vector<std::vector<std::uint32_t>>& inputs,
    const datasets::WorkloadSpec& spec, const std::vector<Value>& workload,
    const std::vector<std::uint64_t>& output_elements) {
  if (!d.reference.library.empty()) return call_reference_function(d, inputs, workload, output_elements);
  return run_reference_command(d, inputs, spec, output_elements);
}

}  // namespace varex::operators::user
