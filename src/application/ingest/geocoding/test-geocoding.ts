import { requireAdmin, type Viewer } from '../../../domain/access.ts';
import { ValidationError } from '../../../domain/errors.ts';
import type { GeocodeExplanation, Geocoder } from '../../../ports/ingest/geocoder.ts';

// POST /api/geocoding/test: one address through the configured chain, with every candidate each
// provider considered and its score, so that an admin can see why an address landed where it did
// (docs/ingestion.md, "Reading a geocoding result").

export const MAX_TEST_ADDRESS_CHARS = 500;

type GeocodingTest = {
  address: string;
  /** The chain's configuration: null when geocoding is off (GEOCODER=off). */
  geocoder: string | null;
  providers: GeocodeExplanation[];
};

export async function testGeocoding(
  geocoder: Geocoder | null,
  viewer: Viewer,
  address: string,
): Promise<GeocodingTest> {
  requireAdmin(viewer);
  const trimmed = address.trim();
  if (trimmed === '' || trimmed.length > MAX_TEST_ADDRESS_CHARS)
    throw new ValidationError(`address must be 1 to ${MAX_TEST_ADDRESS_CHARS} characters`, {
      field: 'address',
    });
  if (!geocoder) return { address: trimmed, geocoder: null, providers: [] };
  return { address: trimmed, geocoder: geocoder.name, providers: await geocoder.explain(trimmed) };
}
