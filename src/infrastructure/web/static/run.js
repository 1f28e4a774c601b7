// The web view: a run live: its output as `show --follow` prints it, with nudge and cancel for a person holding the token.
// Registers its panel in PANELS (app.js).
"use strict";
