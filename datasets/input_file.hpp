#pragma once
// Reading a user's input file: only regular files are read (a directory would read as no rows, a FIFO with
// no writer would block forever), and every failure is a UsageError that names the file and what is wrong.
#include <string>

namespace varex::datasets {

// The whole file. UsageError: missing, a directory, not a regular file, unreadable, larger than
// `max_bytes`; the messages call the file `what` ("input", "plan").
std::string read_input_file(const std::string& path, std::size_t max_bytes = std::string().max_size(),
                            const std::string& what = "input");

}  // namespace varex::datasets
