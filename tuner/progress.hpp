#pragma once
// The live display of `sweep` and `tune`: one line per device, redrawn in place on a terminal while the
// devices run at the same time. Messages (a device that failed) go above the lines. Thread-safe: every
// lane's thread updates its own line.
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace varex::tuner {

class ProgressBoard {
 public:
  // One line per label (device ids), in that order. Draws nothing unless `enabled` and `out` is a terminal.
  ProgressBoard(std::vector<std::string> labels, bool enabled, std::FILE* out = stderr);
  ~ProgressBoard();
  ProgressBoard(const ProgressBoard&) = delete;
  ProgressBoard& operator=(const ProgressBoard&) = delete;

  bool drawing() const { return drawing_; }
  void update(std::size_t line, const std::string& text);
  // A line of its own above the board (printed even when the board does not draw).
  void message(const std::string& text);
  // Leaves the board's last state on the screen; later output goes below it.
  void finish();

 private:
  void redraw();  // with mutex_ held
  std::vector<std::string> labels_;
  std::vector<std::string> texts_;
  std::FILE* out_;
  bool drawing_ = false;
  bool drawn_ = false;
  std::size_t width_ = 80;
  std::mutex mutex_;
};

}  // namespace varex::tuner
