// Starts Swagger UI (swagger-ui-dist, served from this server) on /openapi.json. Nothing is fetched
// from elsewhere: no validator badge (it would call validator.swagger.io), no remote presets.
'use strict';

window.addEventListener('DOMContentLoaded', () => {
  window.ui = window.SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    defaultModelsExpandDepth: 0,
    tryItOutEnabled: false,
  });
});
