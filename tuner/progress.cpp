#include "tuner/progress.hpp"

#include <sys/ioctl.h>
#include <term.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace varex::tuner {

namespace {

std::size_t terminal_width(std::FILE* out) {
  winsize size{};
  if (ioctl(fileno(out), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

// The terminal's cursor-up and clear-to-end-of-line sequences from terminfo; empty when the terminal has
// none (a dumb terminal), or is unknown.
std::pair<std::string, std::string> terminal_controls(std::FILE* out) {
  static std::mutex mutex;  // setupterm sets ncurses' global terminal
  std::lock_guard lock(mutex);
  int error = 0;
  if (setupterm(nullptr, fileno(out), &error) != 0) return {};  // 0 is OK
  auto capability = [](const char* name) {
    char* value = tigetstr(name);
    return value == nullptr || value == reinterpret_cast<char*>(-1) ? std::string() : std::string(value);
  };
  std::string up = capability("cuu1"), clear = capability("el");
  del_curterm(cur_term);
  cur_term = nullptr;
  if (up.empty() || clear.empty()) return {};
  return {up, clear};
}

std::string duration(double seconds) {
  char text[32];
  if (seconds < 60) {
    std::snprintf(text, sizeof text, "%.0f s", seconds);
  } else if (seconds < 3600) {
    std::snprintf(text, sizeof text, "%d:%02d min", static_cast<int>(seconds / 60),
                  static_cast<int>(seconds) % 60);
  } else {
    std::snprintf(text, sizeof text, "%d:%02d h", static_cast<int>(seconds / 3600),
                  static_cast<int>(seconds / 60) % 60);
  }
  return text;
}

}  // namespace

ProgressBoard::ProgressBoard(std::vector<std::string> labels, bool enabled, std::FILE* out,
                             std::chrono::milliseconds interval)
    : labels_(std::move(labels)),
      texts_(labels_.size(), "waiting"),
      printed_(labels_.size()),
      since_(labels_.size(), std::chrono::steady_clock::now()),
      final_(labels_.size(), false),
      out_(out),
      interval_(interval) {
  for (const auto& l : labels_) label_width_ = std::max(label_width_, l.size());
  if (!enabled) return;
  mode_ = Mode::Lines;
  if (isatty(fileno(out))) {
    std::tie(up_, clear_) = terminal_controls(out);
    if (!up_.empty()) mode_ = Mode::Live;
  }
  if (mode_ == Mode::Live) ticker_ = std::thread([this] { tick(); });
}

ProgressBoard::~ProgressBoard() {
  finish();
}

void ProgressBoard::tick() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    if (wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; })) break;
    if (mode_ == Mode::Live) redraw();
  }
}

void ProgressBoard::done(std::size_t line, const std::string& text) {
  update(line, text, true);
  std::lock_guard lock(mutex_);
  if (line < final_.size()) final_[line] = true;
}

std::string ProgressBoard::cut(const std::string& line) const {
  // One screen line each, or moving the cursor up by the number of lines would go wrong.
  const std::size_t width = terminal_width(out_);
  return line.size() >= width ? line.substr(0, width - 1) : line;
}

void ProgressBoard::update(std::size_t line, const std::string& text, bool milestone) {
  std::lock_guard lock(mutex_);
  if (line >= texts_.size() || texts_[line] == text) return;
  texts_[line] = text;
  since_[line] = std::chrono::steady_clock::now();
  if (mode_ == Mode::Live) {
    redraw();
  } else if (mode_ == Mode::Lines) {
    const auto now = std::chrono::steady_clock::now();
    if (!milestone && printed_[line] && now - *printed_[line] < interval_) return;
    printed_[line] = now;
    std::fprintf(out_, "varex: %s  %s\n", labels_[line].c_str(), text.c_str());
    std::fflush(out_);
  }
}

void ProgressBoard::message(const std::string& text) {
  std::lock_guard lock(mutex_);
  if (mode_ == Mode::Live) {
    // Over the board's first line, then the board again below the message.
    for (std::size_t i = 0; i < drawn_; ++i) std::fputs(up_.c_str(), out_);
    std::fprintf(out_, "\r%s%s\n", clear_.c_str(), text.c_str());
    for (std::size_t i = 1; i < drawn_; ++i) std::fprintf(out_, "%s\n", clear_.c_str());
    for (std::size_t i = 1; i < drawn_; ++i) std::fputs(up_.c_str(), out_);
    drawn_ = 0;
    redraw();
  } else {
    std::fprintf(out_, "%s\n", text.c_str());
  }
  std::fflush(out_);
}

void ProgressBoard::finish() {
  {
    std::lock_guard lock(mutex_);
    mode_ = Mode::Off;
    stop_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

void ProgressBoard::redraw() {
  const auto now = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < drawn_; ++i) std::fputs(up_.c_str(), out_);
  for (std::size_t i = 0; i < labels_.size(); ++i) {
    std::string line = labels_[i] + std::string(label_width_ - labels_[i].size() + 2, ' ') + texts_[i];
    const double lasted = std::chrono::duration<double>(now - since_[i]).count();
    if (!final_[i] && texts_[i] != "waiting" && lasted >= 2) line += " (for " + duration(lasted) + ")";
    std::fprintf(out_, "\r%s%s\n", clear_.c_str(), cut(line).c_str());
  }
  drawn_ = labels_.size();
  std::fflush(out_);
}

double budget_used(const Budget& budget, const TuneOutcome& o, std::uint64_t valid) {
  double used = 0;
  switch (budget.kind) {
    case Budget::Kind::Evaluations:
      used = static_cast<double>(o.evaluations) / budget.value;
      break;
    case Budget::Kind::Seconds:
      used = o.spent_s / budget.value;
      break;
    case Budget::Kind::Fraction: {
      // The exhaustive cost as the tuner estimates it: every valid variant at the mean cost so far.
      const double mean = o.evaluations ? o.spent_s / static_cast<double>(o.evaluations) : 0;
      const double total = budget.seconds(static_cast<double>(valid) * mean);
      used = total > 0 ? o.spent_s / total : 0;
      break;
    }
    case Budget::Kind::Unlimited:
      used = valid ? static_cast<double>(o.evaluations) / static_cast<double>(valid) : 1;
      break;
  }
  return std::clamp(used, 0.0, 1.0);
}

std::string describe_progress(const Budget& budget, const TuneOutcome& o, std::uint64_t valid,
                              const std::string& best_variant, Objective objective) {
  const double used = budget_used(budget, o, valid);
  std::string line;
  char text[160];
  switch (budget.kind) {
    case Budget::Kind::Evaluations:
      std::snprintf(text, sizeof text, "%lld/%.0f evaluations", static_cast<long long>(o.evaluations),
                    budget.value);
      break;
    case Budget::Kind::Unlimited:
      std::snprintf(text, sizeof text, "%lld/%llu variants", static_cast<long long>(o.evaluations),
                    static_cast<unsigned long long>(valid));
      break;
    case Budget::Kind::Seconds:
    case Budget::Kind::Fraction:
      std::snprintf(text, sizeof text, "%lld evaluations, %.0f%% of %s",
                    static_cast<long long>(o.evaluations), 100 * used,
                    budget.kind == Budget::Kind::Seconds ? budget.to_string().c_str() : "the budget");
      break;
  }
  line = text;
  line += ", " + duration(o.spent_s);
  if (used > 0 && used < 1) line += ", about " + duration(o.spent_s * (1 - used) / used) + " left";
  if (o.failed) line += ", " + std::to_string(o.failed) + " failed";
  if (!o.history.empty() && std::isfinite(o.history.back().best_value)) {
    // The best single search sample; the declared best comes from the re-measurement (the summary).
    if (objective == Objective::Time) {
      std::snprintf(text, sizeof text, "; fastest sample %.4f ms", o.history.back().best_value);
    } else {
      std::snprintf(text, sizeof text, "; best %s sample %.4g %s", to_string(objective).c_str(),
                    o.history.back().best_value, objective_unit(objective));
    }
    line += text;
    if (!best_variant.empty()) line += " " + best_variant;
  }
  return line;
}

}  // namespace varex::tuner
