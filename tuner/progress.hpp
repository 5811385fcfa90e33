#pragma once
// The live display of `sweep` and `tune`: one line per device. On a terminal the lines are redrawn in
// place (cursor movement from the terminal's terminfo entry, lines cut to the terminal's width); without
// one (a log file, a pipe, a dumb terminal) a device's line is printed when its state changes and every
// few seconds while it runs. Messages (a device that failed) go above the lines. Thread-safe: each lane
// updates its own line. On a terminal a clock moves while a state lasts (probing a device, preparing a
// large workload, a long evaluation): a line unchanged for two seconds shows for how long.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tuner/budget.hpp"
#include "tuner/tuner.hpp"

namespace varex::tuner {

class ProgressBoard {
 public:
  enum class Mode {
    Off,    // --quiet: messages only
    Lines,  // a line per device now and then
    Live    // redrawn in place
  };
  // `enabled` false is Off; otherwise Live where `out` is a terminal that can move the cursor, else Lines.
  ProgressBoard(std::vector<std::string> labels, bool enabled, std::FILE* out = stderr,
                std::chrono::milliseconds interval = std::chrono::seconds(5));
  ~ProgressBoard();
  ProgressBoard(const ProgressBoard&) = delete;
  ProgressBoard& operator=(const ProgressBoard&) = delete;

  Mode mode() const { return mode_; }
  // A running device's state; printed at once in Lines mode when `milestone` (a state change), else at
  // most every `interval`.
  void update(std::size_t line, const std::string& text, bool milestone = false);
  // A device's last state (finished, failed, interrupted): a milestone whose clock stops.
  void done(std::size_t line, const std::string& text);
  // A line of its own above the board, in every mode.
  void message(const std::string& text);
  // Leaves the last state on the screen; later output goes below it.
  void finish();

 private:
  void redraw();  // Live mode, with mutex_ held
  void tick();    // Live mode: redraws every second while the board runs, for the clocks
  std::string cut(const std::string& line) const;
  std::vector<std::string> labels_;
  std::vector<std::string> texts_;
  // When each line was last printed (Lines mode); none yet: the first is printed whatever the clock says
  // (steady_clock counts from boot, and a machine up for less than the interval printed nothing).
  std::vector<std::optional<std::chrono::steady_clock::time_point>> printed_;
  std::vector<std::chrono::steady_clock::time_point> since_;  // when each line's text last changed
  std::vector<bool> final_;
  std::FILE* out_;
  Mode mode_ = Mode::Off;
  std::chrono::milliseconds interval_;
  std::size_t label_width_ = 0;
  std::size_t drawn_ = 0;   // lines on the screen below the cursor's home
  std::string up_, clear_;  // terminfo: cursor up one line, clear to the end of the line
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread ticker_;  // last: it starts once everything above is there
};

// A running search as one line: progress against the budget (evaluations, seconds or the share of the
// estimated exhaustive cost; a sweep against the space), time spent, an estimate of the time left, the
// failures and the best variant so far.
std::string describe_progress(const Budget& budget, const TuneOutcome& outcome, std::uint64_t valid_variants,
                              const std::string& best_variant, Objective objective = Objective::Time);

// The share of the budget spent, 0 to 1.
double budget_used(const Budget& budget, const TuneOutcome& outcome, std::uint64_t valid_variants);

}  // namespace varex::tuner
