#!/bin/sh
# The fixture service: never built or started by perfgate check.
exit 0
