# The two set-up commands of the README. Each installs what it needs on a fresh Debian machine
# with Node and npm (Debian packages need root or sudo), then runs.
#   make start   the service on the embedded database (http://127.0.0.1:3000)
#   make test    type check, lint, dependency direction, and the whole test suite

SHELL := /bin/bash
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)

.PHONY: start test setup system-packages node-modules

start: setup
	bin/chronomap start

test: setup
	npm test

setup: system-packages node-modules

system-packages:
	@scripts/install-system-packages

node-modules: node_modules/.package-lock.json

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@
