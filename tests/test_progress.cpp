// The progress display: lines against the budget with an estimate of the time left and the best variant; on
// a (pseudo-)terminal one line per device redrawn in place within the terminal's width; without one a line
// now and then; nothing with --quiet.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "tuner/progress.hpp"

namespace varex::tuner {
namespace {

TuneOutcome outcome(std::int64_t evaluations, double spent_s, double best_value) {
  TuneOutcome o;
  o.evaluations = evaluations;
  o.spent_s = spent_s;
  o.history.push_back({evaluations, spent_s, best_value, 0});
  return o;
}

TEST(Progress, CountsAgainstTheBudgetWithTheTimeLeftAndTheBest) {
  const TuneOutcome o = outcome(15, 30, 0.25);
  std::string line = describe_progress(Budget::parse("60"), o, 44208, "ept=8 vec=4");
  EXPECT_NE(line.find("15/60 evaluations"), std::string::npos) << line;    // not 15/44208
  EXPECT_NE(line.find("about 1:30 min left"), std::string::npos) << line;  // 30 s for a quarter
  EXPECT_NE(line.find("fastest sample 0.2500 ms ept=8 vec=4"), std::string::npos) << line;

  line = describe_progress(Budget::parse("2m"), o, 44208, "");
  EXPECT_NE(line.find("25% of 120s"), std::string::npos) << line;
  EXPECT_NE(line.find("about 1:30 min left"), std::string::npos) << line;

  // A share of the exhaustive cost: 44208 variants at the mean 2 s so far is 88416 s, 10% of it 8841.6 s.
  line = describe_progress(Budget::parse("10%"), o, 44208, "");
  EXPECT_NEAR(budget_used(Budget::parse("10%"), o, 44208), 30 / 8841.6, 1e-9);
  EXPECT_NE(line.find("0% of the budget"), std::string::npos) << line;

  // A sweep counts against the space.
  line = describe_progress(Budget::parse("all"), o, 60, "");
  EXPECT_NE(line.find("15/60 variants"), std::string::npos) << line;
  EXPECT_DOUBLE_EQ(budget_used(Budget::parse("all"), o, 60), 0.25);
}

std::string drain(int fd) {
  std::string out;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

TEST(Progress, OnATerminalLinesAreRedrawnInPlaceWithinItsWidth) {
  int master = -1, slave = -1;
  winsize size{};
  size.ws_col = 60;
  size.ws_row = 24;
  ASSERT_EQ(openpty(&master, &slave, nullptr, nullptr, &size), 0);
  setenv("TERM", "xterm", 1);
  std::FILE* out = fdopen(slave, "w");
  {
    ProgressBoard board({"cuda:0", "cuda:1"}, true, out);
    ASSERT_EQ(board.mode(), ProgressBoard::Mode::Live);
    board.update(0, std::string(200, 'x'));
    board.update(1, "12/60 evaluations");
    // A state that lasts (a probe, a long preparation) shows a moving clock (issue 28: it stood still).
    std::this_thread::sleep_for(std::chrono::milliseconds(2300));
    board.done(0, "finished");
    board.message("varex: cuda:1 failed: something");
    board.finish();
  }
  std::fclose(out);
  ::fcntl(master, F_SETFL, O_NONBLOCK);
  const std::string screen = drain(master);
  ::close(master);
  EXPECT_NE(screen.find("\x1b[A"), std::string::npos) << "moved the cursor up (xterm's cuu1)";
  EXPECT_NE(screen.find("12/60 evaluations"), std::string::npos);
  EXPECT_NE(screen.find("12/60 evaluations (for 2 s)"), std::string::npos) << "the clock moved by itself";
  EXPECT_EQ(screen.find("finished (for"), std::string::npos) << "a finished line's clock stops";
  EXPECT_NE(screen.find("varex: cuda:1 failed: something"), std::string::npos);
  // No drawn line reaches the terminal's width: a wrapped line would break the redrawing.
  std::size_t longest = 0, run = 0;
  for (char c : screen) {
    run = (c == '\r' || c == '\n') ? 0 : run + 1;
    if (c != '\x1b') longest = std::max(longest, run);
  }
  EXPECT_LT(longest, 60u + 8) << "a line (escape codes included) longer than the terminal";
  EXPECT_EQ(screen.find(std::string(60, 'x')), std::string::npos) << "the long line was not cut";
}

TEST(Progress, WithoutATerminalALineNowAndThenAndNothingWhenQuiet) {
  std::FILE* file = std::tmpfile();
  {
    ProgressBoard board({"ocl:0:0"}, true, file, std::chrono::milliseconds(0));
    EXPECT_EQ(board.mode(), ProgressBoard::Mode::Lines);
    board.update(0, "probing the copy bandwidth", true);
    board.update(0, "3/60 evaluations");
    board.update(0, "finished: best 1.0 ms", true);
  }
  std::fflush(file);
  std::rewind(file);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), file));
  std::fclose(file);
  EXPECT_EQ(text,
            "varex: ocl:0:0  probing the copy bandwidth\nvarex: ocl:0:0  3/60 evaluations\n"
            "varex: ocl:0:0  finished: best 1.0 ms\n");
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << "no escape codes in a log";

  // Between milestones, at most one line per interval.
  file = std::tmpfile();
  {
    ProgressBoard board({"ocl:0:0"}, true, file, std::chrono::hours(1));
    for (int i = 0; i < 100; ++i) board.update(0, std::to_string(i) + "/100 evaluations");
  }
  EXPECT_EQ(std::ftell(file), static_cast<long>(std::string("varex: ocl:0:0  0/100 evaluations\n").size()));
  std::fclose(file);

  file = std::tmpfile();
  {
    ProgressBoard quiet({"ocl:0:0"}, false, file);
    quiet.update(0, "1/2 evaluations", true);
  }
  EXPECT_EQ(std::ftell(file), 0);
  std::fclose(file);
}

}  // namespace
}  // namespace varex::tuner
