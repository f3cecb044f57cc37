// Runs before any test: see startup.c.
#pragma once
