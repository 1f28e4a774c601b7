// The web view: the live workers, what each runs now and for how long, its last beat.
// Registers its panel in PANELS (app.js).
"use strict";
