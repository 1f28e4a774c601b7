// The web view: spend and flow over time: finished per minute by status, claim wait p50/p90, spend per agent against the budget.
// Registers its panel in PANELS (app.js).
"use strict";
