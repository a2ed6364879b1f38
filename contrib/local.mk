# contrib/: b2frame tool, scripts
EXTRA_DIST += contrib/install-deps contrib/run-tests contrib/quickstart
