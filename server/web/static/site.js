/* global document, navigator, setTimeout */
// Progressive enhancement only: every page works without this file.
// - [data-copy]: a "Copy" button after the element copies its text (attribution snippets, curl lines).
// - form[data-strip-empty]: empty fields are left out of the submitted URL, so a search reads
//   /events?city=Berkeley rather than /events?q=&city=Berkeley&age_min=&...
// - [data-locate]: a "Use my location" button, only where the browser can tell (navigator.geolocation);
//   it fills the fieldset's hidden lat and lng, empties the typed place, and submits the form.
(function () {
  'use strict';

  function addCopyButton(el) {
    if (!navigator.clipboard) return;
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'copy-button secondary';
    button.textContent = 'Copy';
    var label = el.getAttribute('data-copy');
    if (label) button.setAttribute('aria-label', 'Copy ' + label);
    var status = document.createElement('span');
    status.className = 'visually-hidden';
    status.setAttribute('role', 'status');
    button.addEventListener('click', function () {
      navigator.clipboard.writeText(el.textContent || '').then(
        function () {
          button.textContent = 'Copied';
          status.textContent = 'Copied to the clipboard';
          setTimeout(function () {
            button.textContent = 'Copy';
            status.textContent = '';
          }, 2000);
        },
        function () {
          status.textContent = 'Copying failed: select the text and copy it yourself';
        },
      );
    });
    el.insertAdjacentElement('afterend', button);
    button.insertAdjacentElement('afterend', status);
  }

  function stripEmptyOnSubmit(form) {
    form.addEventListener('submit', function () {
      var fields = form.querySelectorAll('input[name], select[name]');
      for (var i = 0; i < fields.length; i++) {
        var f = fields[i];
        if (f.type !== 'checkbox' && f.value === '') f.disabled = true;
      }
      // Re-enable after the navigation has taken the values, so Back shows the form as it was.
      setTimeout(function () {
        for (var i = 0; i < fields.length; i++) fields[i].disabled = false;
      }, 0);
    });
  }

  function addLocateButton(fieldset) {
    if (!('geolocation' in navigator)) return;
    var form = fieldset.form || fieldset.closest('form');
    var lat = fieldset.querySelector('input[name="lat"]');
    var lng = fieldset.querySelector('input[name="lng"]');
    var near = fieldset.querySelector('input[name="near"]');
    if (!form || !lat || !lng) return;
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'locate-button secondary';
    button.textContent = 'Use my location';
    var status = document.createElement('p');
    status.className = 'locate-status';
    status.setAttribute('role', 'status');
    button.addEventListener('click', function () {
      status.textContent = 'Finding your location…';
      navigator.geolocation.getCurrentPosition(
        function (pos) {
          // Four decimals (about 10 m) say where well enough, and keep the URL short and cacheable.
          lat.value = pos.coords.latitude.toFixed(4);
          lng.value = pos.coords.longitude.toFixed(4);
          if (near) near.value = '';
          status.textContent = 'Searching near your location…';
          if (form.requestSubmit) form.requestSubmit();
          else form.submit();
        },
        function () {
          status.textContent = 'Your location is not available here: type a ZIP code or a city or town instead.';
        },
        { maximumAge: 300000, timeout: 15000 },
      );
    });
    fieldset.appendChild(button);
    fieldset.appendChild(status);
  }

  document.querySelectorAll('[data-copy]').forEach(addCopyButton);
  document.querySelectorAll('form [data-locate]').forEach(addLocateButton);
  document.querySelectorAll('form[data-strip-empty]').forEach(stripEmptyOnSubmit);
})();
