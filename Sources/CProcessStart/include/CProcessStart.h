// Nothing to call: the module's one function runs by itself, from the executable's preinit array
// (process_start.c), before any library is initialised.
