// The web view: the dependency graph laid out: layers by what waits on what, and flows' phases.
// Registers its panel in PANELS (app.js).
"use strict";
