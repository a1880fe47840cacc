//! The C ABI of fdtable (under construction).
