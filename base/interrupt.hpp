#pragma once
// Ctrl-C and SIGTERM: long commands stop between measurements and close their sessions properly.

namespace varex {

void install_interrupt_handler();
bool interrupted();
// Forgets an interrupt that has been handled, for a process that goes on (a library user, a test).
void clear_interrupt();

}  // namespace varex
