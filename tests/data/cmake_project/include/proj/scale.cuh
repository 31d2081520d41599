// The project's header: needs the build's define, like a real code base's config macros.
#pragma once
#ifndef PROJ_SCALE
#error "PROJ_SCALE is not defined: compile with the project's flags (compile_commands.json)"
#endif

__device__ inline float proj_scale(float x) { return x * PROJ_SCALE; }
