#pragma once
// Ctrl-C and SIGTERM: long commands stop between measurements and close their sessions properly.

namespace varex {

void install_interrupt_handler();
bool interrupted();

}  // namespace varex
