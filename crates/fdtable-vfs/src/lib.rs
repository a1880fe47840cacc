//! Open file descriptions and the syscall layer (under construction).
