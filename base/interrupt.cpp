#include "base/interrupt.hpp"

#include <csignal>

namespace varex {

namespace {
volatile std::sig_atomic_t g_interrupted = 0;
void on_signal(int) {
  g_interrupted = 1;
}
}  // namespace

void install_interrupt_handler() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a worker that dies must not kill the parent through its pipe
}

bool interrupted() {
  return g_interrupted != 0;
}

void clear_interrupt() {
  g_interrupted = 0;
}

}  // namespace varex
