// Cooperative interruption of long engine work: a front end's Stop sets a flag the engine checks between steps.
#pragma once

namespace shardscope {

// Asks the engine to stop the work it is doing (callable from any thread, no locks held).
void request_cancellation();
// Forgets a request (a front end calls this before starting new work).
void clear_cancellation();
// Throws KeyboardInterrupt when a request is pending, clearing it: the running program stops at its next
// equation, device or chunk, and the error reaches the user as an interrupted cell.
void throw_if_cancelled();

}  // namespace shardscope
