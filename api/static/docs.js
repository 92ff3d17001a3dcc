// The API reference (Swagger UI, served from /static/vendor like the status page's libraries):
// no CDN, no validator badge, nothing fetched but this server's /openapi.json.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    // Off: a deep link puts an anchor inside each operation's toggle button, a control in a
    // control, which screen readers and keyboards cannot reach.
    deepLinking: false,
    validatorUrl: null,
    showExtensions: true,
    showCommonExtensions: true,
  });
});
