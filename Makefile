# libfdtable, the C library: build, install, test.
#
#   make                        # cargo build --release: target/release/libfdtable.{a,so}
#   make install PREFIX=/opt/x  # lib/libfdtable.{a,so}, include/fdtable.h, lib/pkgconfig/fdtable.pc
#   make uninstall PREFIX=/opt/x
#   make example                # builds and runs examples/c
#   make ctest                  # the C tests under ASan + UBSan (ci/ctest)
#
# DESTDIR is honoured for staged installs. CARGO_TARGET_DIR is honoured.

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CARGO      ?= cargo
TARGET_DIR ?= $(if $(CARGO_TARGET_DIR),$(CARGO_TARGET_DIR),target)
RELEASE    := $(TARGET_DIR)/release
VERSION    := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
INSTALL    ?= install

.PHONY: all release install uninstall example ctest clean-c

all: release

release:
	$(CARGO) build --release -p fdtable-ffi

install: release
	$(INSTALL) -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL) -m 644 $(RELEASE)/libfdtable.a $(DESTDIR)$(LIBDIR)/libfdtable.a
	$(INSTALL) -m 755 $(RELEASE)/libfdtable.so $(DESTDIR)$(LIBDIR)/libfdtable.so
	$(INSTALL) -m 644 include/fdtable.h $(DESTDIR)$(INCLUDEDIR)/fdtable.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    crates/fdtable-ffi/fdtable.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/fdtable.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/fdtable.pc

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libfdtable.a $(DESTDIR)$(LIBDIR)/libfdtable.so \
	      $(DESTDIR)$(INCLUDEDIR)/fdtable.h $(DESTDIR)$(PKGCONFIGDIR)/fdtable.pc

example:
	$(MAKE) -C examples/c run

ctest:
	ci/ctest

clean-c:
	$(MAKE) -C examples/c clean
