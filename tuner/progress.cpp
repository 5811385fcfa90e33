#include "tuner/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>

namespace varex::tuner {

namespace {

std::size_t terminal_width(std::FILE* out) {
  winsize size{};
  if (ioctl(fileno(out), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

}  // namespace

ProgressBoard::ProgressBoard(std::vector<std::string> labels, bool enabled, std::FILE* out)
    : labels_(std::move(labels)), texts_(labels_.size(), "waiting"), out_(out) {
  drawing_ = enabled && isatty(fileno(out));
  if (drawing_) width_ = terminal_width(out);
}

ProgressBoard::~ProgressBoard() {
  finish();
}

void ProgressBoard::update(std::size_t line, const std::string& text) {
  std::lock_guard lock(mutex_);
  if (line >= texts_.size() || texts_[line] == text) return;
  texts_[line] = text;
  if (drawing_) redraw();
}

void ProgressBoard::message(const std::string& text) {
  std::lock_guard lock(mutex_);
  if (drawing_ && drawn_) {
    // Up to the board's first line, print the message over it, and the board again below.
    std::fprintf(out_, "\x1b[%zuA\r\x1b[J", labels_.size());
    drawn_ = false;
  }
  std::fprintf(out_, "%s\n", text.c_str());
  if (drawing_) redraw();
  std::fflush(out_);
}

void ProgressBoard::finish() {
  std::lock_guard lock(mutex_);
  drawing_ = false;
}

void ProgressBoard::redraw() {
  std::size_t label_width = 0;
  for (const auto& l : labels_) label_width = std::max(label_width, l.size());
  if (drawn_) std::fprintf(out_, "\x1b[%zuA", labels_.size());
  for (std::size_t i = 0; i < labels_.size(); ++i) {
    std::string line = labels_[i] + std::string(label_width - labels_[i].size() + 2, ' ') + texts_[i];
    // One screen line each, or the cursor arithmetic above breaks.
    if (line.size() >= width_) line.resize(width_ - 1);
    std::fprintf(out_, "\r\x1b[K%s\n", line.c_str());
  }
  drawn_ = true;
  std::fflush(out_);
}

}  // namespace varex::tuner
