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
#
# `make install` installs into $(DESTDIR)$(LIBDIR): libfdtable.so.X.Y.Z, the links
# libfdtable.so.X (the SONAME) and libfdtable.so, libfdtable.a; $(INCLUDEDIR)/fdtable.h;
# $(PKGCONFIGDIR)/fdtable.pc. DESTDIR, PREFIX, LIBDIR, INCLUDEDIR, PKGCONFIGDIR are honoured;
# it fails if `make` has not run. The installed libraries carry no debug info (the `dist`
# profile strips the shared one, `make` the static one); to keep it, build with
# `CARGO_PROFILE_DIST_DEBUG=2 CARGO_PROFILE_DIST_STRIP=none make STRIP=true` and split it
# yourself. Run ldconfig after installing into a system directory. CARGO_TARGET_DIR is
# honoured.

PREFIX       ?= /usr/local
EXEC_PREFIX  ?= $(PREFIX)
LIBDIR       ?= $(EXEC_PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
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

.PHONY: all build install uninstall example ctest clean-c

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
	$(INSTALL) -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL) -m 755 $(BUILD)/$(REALNAME) $(DESTDIR)$(LIBDIR)/$(REALNAME)
	ln -sf $(REALNAME) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(REALNAME) $(DESTDIR)$(LIBDIR)/libfdtable.so
	$(INSTALL) -m 644 $(BUILD)/libfdtable.a $(DESTDIR)$(LIBDIR)/libfdtable.a
	$(INSTALL) -m 644 include/fdtable.h $(DESTDIR)$(INCLUDEDIR)/fdtable.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    -e "s|@LIBS_PRIVATE@|$$(cat $(BUILD)/libs.private)|" \
	    crates/fdtable-ffi/fdtable.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/fdtable.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/fdtable.pc

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/$(REALNAME) $(DESTDIR)$(LIBDIR)/$(SONAME) \
	      $(DESTDIR)$(LIBDIR)/libfdtable.so $(DESTDIR)$(LIBDIR)/libfdtable.a \
	      $(DESTDIR)$(INCLUDEDIR)/fdtable.h $(DESTDIR)$(PKGCONFIGDIR)/fdtable.pc

example:
	$(MAKE) -C examples/c run

ctest:
	ci/ctest

clean-c:
	$(MAKE) -C examples/c clean
	rm -rf $(BUILD)
