// The person's answer to get_current_location: the browser's Geolocation API, asked only
// when they press "Share my location". A refusal or a browser that cannot tell is a "no"
// with the reason, which the model reads.

const REASONS = {
  1: "the browser was not allowed to share the location (permission denied)",
  2: "the device could not find its location (position unavailable)",
  3: "the device took too long to find its location (timed out)",
};

/** Whether an approval request asks the page for the device's location. */
export function asksLocation(preview) {
  return (preview?.effects || []).some((e) => e.effect === "location");
}

/** Ask the browser; resolves to the approval answer's body: {approved, reason?, location?}. */
export function readLocation({ timeout = 15000 } = {}) {
  return new Promise((resolve) => {
    if (!navigator.geolocation) {
      resolve({ approved: false, reason: "this browser cannot tell its location (no Geolocation API)" });
      return;
    }
    navigator.geolocation.getCurrentPosition(
      ({ coords }) => resolve({
        approved: true,
        location: { lon: coords.longitude, lat: coords.latitude, accuracy_m: coords.accuracy },
      }),
      (error) => resolve({ approved: false, reason: REASONS[error.code] || `the location could not be read (${error.message})` }),
      { enableHighAccuracy: true, timeout, maximumAge: 60000 },
    );
  });
}
