# libfdtable, the C library: build, install, test.
#
#   make                          # build: cargo's `dist` profile, then $(BUILD):
#                                 #   libfdtable.so.X.Y.Z (+ .so.X, .so links), libfdtable.a,
#                                 #   libs.private (what a static link needs: rustc's list
#                                 #   less -lgcc_s, see below)
#   make install PREFIX=/usr      # copies only (never runs cargo): see below
#   make uninstall PREFIX=/usr
#   make example                  # builds and runs examples/c
#   make ctest                    # the C tests under ASan + UBSan, ABI checks (ci/ctest)
#   make tsan                     # the static library for ThreadSanitizer programs (below)
#
# `make install` installs into $(DESTDIR)$(LIBDIR): libfdtable.so.X.Y.Z, the links
# libfdtable.so.X (the SONAME) and libfdtable.so, libfdtable.a; $(INCLUDEDIR)/fdtable.h;
# $(PKGCONFIGDIR)/fdtable.pc. DESTDIR, PREFIX, EXEC_PREFIX, LIBDIR, INCLUDEDIR, PKGCONFIGDIR
# are honoured; LIBDIR and INCLUDEDIR may be absolute or, as CMake's GNUInstallDirs and
# Meson take them, relative to EXEC_PREFIX and PREFIX: a multiarch layout is
# `make install PREFIX=/usr LIBDIR=lib/x86_64-linux-gnu` (or LIBDIR=/usr/lib/x86_64-linux-gnu),
# and fdtable.pc then says libdir=${exec_prefix}/lib/x86_64-linux-gnu. It fails if `make` has
# not run. The installed libraries carry no debug info (the `dist`
# profile strips the shared one, `make` the static one); to keep it, build with
# `CARGO_PROFILE_DIST_DEBUG=2 CARGO_PROFILE_DIST_STRIP=none make STRIP=true` and split it
# yourself. Run ldconfig after installing into a system directory. CARGO_TARGET_DIR is
# honoured.

PREFIX       ?= /usr/local
EXEC_PREFIX  ?= $(PREFIX)
LIBDIR       ?= lib
INCLUDEDIR   ?= include
# Relative directories are under EXEC_PREFIX (libraries) and PREFIX (headers).
abs_dir       = $(if $(filter /%,$(2)),$(2),$(1)/$(2))
LIBDIR_ABS   := $(call abs_dir,$(EXEC_PREFIX),$(LIBDIR))
INCDIR_ABS   := $(call abs_dir,$(PREFIX),$(INCLUDEDIR))
PKGCONFIGDIR ?= $(LIBDIR_ABS)/pkgconfig
# fdtable.pc names its directories relative to its prefix where they are under it, so that
# `pkg-config --define-prefix` and PKG_CONFIG_SYSROOT_DIR relocate them.
pc_dir        = $(if $(filter $(1)/%,$(2)),$${$(3)}$(patsubst $(1)%,%,$(2)),$(2))
PC_LIBDIR    := $(call pc_dir,$(EXEC_PREFIX),$(LIBDIR_ABS),exec_prefix)
PC_INCDIR    := $(call pc_dir,$(PREFIX),$(INCDIR_ABS),prefix)
PC_EXEC      := $(if $(filter $(PREFIX),$(EXEC_PREFIX)),$${prefix},$(EXEC_PREFIX))
CARGO        ?= cargo
STRIP        ?= strip
INSTALL      ?= install
TARGET_DIR   ?= $(if $(CARGO_TARGET_DIR),$(CARGO_TARGET_DIR),target)
PROFILE      := dist
OUT          := $(TARGET_DIR)/$(PROFILE)
BUILD        := $(OUT)/c

# The version is the header's (FDT_VERSION_*, which a test keeps equal to fdtable-ffi's).
version_part = $(shell sed -n 's/^\#define FDT_VERSION_$(1) \([0-9][0-9]*\)$$/\1/p' include/fdtable.h)
MAJOR        := $(call version_part,MAJOR)
VERSION      := $(MAJOR).$(call version_part,MINOR).$(call version_part,PATCH)
SONAME       := libfdtable.so.$(MAJOR)
REALNAME     := libfdtable.so.$(VERSION)

.PHONY: all build install uninstall example ctest tsan clean-c

all: build

# cargo decides what to rebuild. The static library's objects (std's among them) keep their
# debug info through rustc: `strip -S` (--strip-debug for GNU, LLVM and BSD strip) drops it.
# `--print=native-static-libs` makes rustc list what the static library needs from the
# system; cargo replays that note when nothing changed. libs.private (the .pc file's
# Libs.private) is that list without -lgcc_s: Rust's unwinder is libgcc's, which the C
# compiler driver links by itself, as the link needs it (libgcc_s in a dynamic link,
# libgcc_eh with -static or -static-libgcc), while an explicit -lgcc_s fails a -static link,
# libgcc_s having no static archive.
build:
	@test -n "$(MAJOR)" || { echo "make: no FDT_VERSION_MAJOR in include/fdtable.h" >&2; exit 1; }
	mkdir -p $(BUILD)
	$(CARGO) rustc --profile $(PROFILE) -p fdtable-ffi --lib -- --print=native-static-libs \
	    2>$(BUILD)/cargo.log; status=$$?; cat $(BUILD)/cargo.log >&2; exit $$status
	sed -n 's/^note: native-static-libs: //p' $(BUILD)/cargo.log | tail -n 1 | \
	    awk '{ for (i = 1; i <= NF; i++) if ($$i != "-lgcc_s") printf "%s%s", (n++ ? " " : ""), $$i; print "" }' \
	    > $(BUILD)/libs.private
	@test -s $(BUILD)/libs.private || { echo "make: rustc did not list the native static libraries" >&2; exit 1; }
	rm -f $(BUILD)/libfdtable.so* $(BUILD)/libfdtable.a
	cp $(OUT)/libfdtable.so $(BUILD)/$(REALNAME)
	ln -s $(REALNAME) $(BUILD)/$(SONAME)
	ln -s $(REALNAME) $(BUILD)/libfdtable.so
	cp $(OUT)/libfdtable.a $(BUILD)/libfdtable.a
	$(STRIP) -S $(BUILD)/libfdtable.a

install:
	@for f in $(REALNAME) libfdtable.a libs.private; do \
	  test -f $(BUILD)/$$f || { echo "make install: $(BUILD)/$$f is missing: run make first" >&2; exit 1; }; \
	done
	$(INSTALL) -d $(DESTDIR)$(LIBDIR_ABS) $(DESTDIR)$(INCDIR_ABS) $(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL) -m 755 $(BUILD)/$(REALNAME) $(DESTDIR)$(LIBDIR_ABS)/$(REALNAME)
	ln -sf $(REALNAME) $(DESTDIR)$(LIBDIR_ABS)/$(SONAME)
	ln -sf $(REALNAME) $(DESTDIR)$(LIBDIR_ABS)/libfdtable.so
	$(INSTALL) -m 644 $(BUILD)/libfdtable.a $(DESTDIR)$(LIBDIR_ABS)/libfdtable.a
	$(INSTALL) -m 644 include/fdtable.h $(DESTDIR)$(INCDIR_ABS)/fdtable.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@EXEC_PREFIX@|$(PC_EXEC)|' \
	    -e 's|@LIBDIR@|$(PC_LIBDIR)|' -e 's|@INCLUDEDIR@|$(PC_INCDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' -e "s|@LIBS_PRIVATE@|$$(cat $(BUILD)/libs.private)|" \
	    crates/fdtable-ffi/fdtable.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/fdtable.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/fdtable.pc

uninstall:
	rm -f $(DESTDIR)$(LIBDIR_ABS)/$(REALNAME) $(DESTDIR)$(LIBDIR_ABS)/$(SONAME) \
	      $(DESTDIR)$(LIBDIR_ABS)/libfdtable.so $(DESTDIR)$(LIBDIR_ABS)/libfdtable.a \
	      $(DESTDIR)$(INCDIR_ABS)/fdtable.h $(DESTDIR)$(PKGCONFIGDIR)/fdtable.pc

example:
	$(MAKE) -C examples/c run

ctest:
	ci/ctest

# ThreadSanitizer sees only the synchronisation of instrumented code: with the shipped
# library, a C program's own accesses that the library orders (a release callback freeing
# what another thread's read callback used, after the last reference went) are reported as
# races. `make tsan` builds the library instrumented (nightly Rust, -Zsanitizer=thread, std
# rebuilt with it) into $(TSAN_OUT): libfdtable.a and libtsan_rt.a, the TSan runtime of the
# LLVM that instrumented it (an older one, GCC 12's libtsan for instance, lacks
# __tsan_memcpy). Compile with -fsanitize=thread, link without it (docs/C-ABI.md):
#   cc -fsanitize=thread -g -c prog.c
#   cc prog.o -Wl,--whole-archive $(TSAN_OUT)/libtsan_rt.a -Wl,--no-whole-archive #      $(TSAN_OUT)/libfdtable.a -lpthread -ldl -lm -lrt -lutil -o prog
TSAN_TRIPLE  ?= $(shell rustc -vV | sed -n 's/^host: //p')
TSAN_TARGET  := $(TARGET_DIR)/tsan
TSAN_OUT     := $(TSAN_TARGET)/c
tsan:
	CARGO_TARGET_DIR=$(TSAN_TARGET) \
	RUSTFLAGS="-Zsanitizer=thread -Cunsafe-allow-abi-mismatch=sanitizer" \
	    $(CARGO) +nightly build --release -Zbuild-std --target $(TSAN_TRIPLE) -p fdtable-ffi
	mkdir -p $(TSAN_OUT)
	cp $(TSAN_TARGET)/$(TSAN_TRIPLE)/release/libfdtable.a $(TSAN_OUT)/libfdtable.a
	cp "$$(rustc +nightly --print target-libdir --target $(TSAN_TRIPLE))/librustc-nightly_rt.tsan.a" \
	    $(TSAN_OUT)/libtsan_rt.a

clean-c:
	$(MAKE) -C examples/c clean
	rm -rf $(BUILD)
