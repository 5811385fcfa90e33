#include "operators/user/reference_command.hpp"

#include <stdlib.h>

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
  for (const std::string& w : d.reference_command) {
    const std::filesystem::path local = d.dir / w;
    std::error_code error;
    words.push_back(!w.empty() && w[0] != '-' && std::filesystem::is_regular_file(local, error)
                        ? std::filesystem::absolute(local).string()
                        : w);
  }
  return words;
}

}  // namespace

std::vector<std::uint32_t> reference_output(const Declaration& d,
                                            const std::vector<std::vector<std::uint32_t>>& inputs,
                                            const datasets::WorkloadSpec& spec,
                                            std::uint64_t output_elements) {
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
  const std::filesystem::path out = scratch.path() / (d.output.name + ".bin");
  argv.insert(argv.end(), {"--" + d.output.name, out.string()});
  const std::string what =
      (d.dir / "operator.json").string() + ": reference command '" + join(d.reference_command, " ") + "'";
  const CommandResult r = run_command(argv);
  if (!r.ok())
    throw UsageError(what + " failed (status " + std::to_string(r.status) + "): " + r.first_line());
  std::ifstream in(out, std::ios::binary);
  if (!in) throw UsageError(what + " wrote no " + out.filename().string());
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() != output_elements * 4)
    throw UsageError(what + " wrote " + std::to_string(bytes.size()) + " bytes of '" + d.output.name +
                     "', expected " + std::to_string(output_elements * 4) + " (" +
                     std::to_string(output_elements) + " elements of 4 bytes)");
  std::vector<std::uint32_t> words(output_elements);
  if (!bytes.empty()) std::memcpy(words.data(), bytes.data(), bytes.size());
  return words;
}

}  // namespace varex::operators::user
