//! Differential testing against the live kernel (under construction).
