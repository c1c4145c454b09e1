// The media under the timeline: its kind, its length, and its waveform's peaks.

const PEAK_COUNT = 4000;
// The whole file is fetched to draw it: a larger one gets a plain timeline.
export const DECODE_MAX_BYTES = { audio: 200 * 1024 * 1024, video: 50 * 1024 * 1024 };
export const AUDIO_EXTENSIONS = /\.(wav|wave|mp3|ogg|oga|opus|flac|m4a|aac|weba)$/i;

// The waveform's peaks (of a video: its sound track), decoded in the browser from a
// same-site file (another site's file would need its CORS and this page's connect-src; it
// gets a plain timeline instead, as does a video without sound).
export async function decodePeaks(url, maxBytes) {
  if (new URL(url, document.baseURI).origin !== location.origin) return null;
  const response = await fetch(url, { credentials: "same-origin" });
  if (!response.ok) return null;
  if (Number(response.headers.get("Content-Length")) > maxBytes) {
    await response.body.cancel();
    return null;
  }
  const data = await response.arrayBuffer();
  // An offline context decodes without asking for the sound card (no autoplay warning).
  const buffer = await new OfflineAudioContext(1, 1, 8000).decodeAudioData(data);
  const count = Math.max(1, Math.min(PEAK_COUNT, buffer.length));
  const peaks = new Float32Array(count);
  const size = buffer.length / count;
  for (let c = 0; c < buffer.numberOfChannels; c++) {
    const samples = buffer.getChannelData(c);
    for (let i = 0; i < count; i++) {
      let peak = peaks[i];
      const stop = Math.min(samples.length, Math.ceil((i + 1) * size));
      for (let j = Math.floor(i * size); j < stop; j++) {
        const v = Math.abs(samples[j]);
        if (v > peak) peak = v;
      }
      peaks[i] = peak;
    }
  }
  return { peaks, duration: buffer.duration };
}

export function metadataDuration(media) {
  return new Promise((resolve, reject) => {
    const done = () => {
      media.removeEventListener("loadedmetadata", done);
      media.removeEventListener("error", failed);
      resolve(media.duration);
    };
    const failed = () => {
      media.removeEventListener("loadedmetadata", done);
      media.removeEventListener("error", failed);
      reject(new Error("media error"));
    };
    if (media.readyState >= 1) return resolve(media.duration);
    if (media.error) return reject(new Error("media error"));
    media.addEventListener("loadedmetadata", done);
    media.addEventListener("error", failed);
    if (media.preload === "none") media.preload = "metadata";
  });
}
