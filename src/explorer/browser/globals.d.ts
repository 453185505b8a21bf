/**
 * The libraries the explorer's browser scripts find as globals: uPlot (its own type
 * declarations, the package being loaded as a prebuilt script before the chart script) and the
 * small part of Leaflet and Leaflet.markercluster the map script uses (the packages ship no types).
 */
import type UPlot from 'uplot';

declare global {
  const uPlot: typeof UPlot;

  namespace L {
    interface LatLng {
      lat: number;
      lng: number;
    }
    interface LatLngBounds {
      extend(point: LatLng | LatLngBounds): LatLngBounds;
      isValid(): boolean;
      getWest(): number;
      getEast(): number;
      getSouth(): number;
      getNorth(): number;
    }
    interface Layer {
      addTo(map: Map): this;
      bindPopup(content: () => HTMLElement): this;
    }
    interface CircleMarker extends Layer {
      getLatLng(): LatLng;
    }
    interface FeatureGroup extends Layer {
      addLayer(layer: Layer): this;
      getBounds(): LatLngBounds;
    }
    interface MarkerClusterGroup extends FeatureGroup {
      addLayers(layers: Layer[]): this;
    }
    interface Map {
      setView(center: [number, number], zoom: number): this;
      fitBounds(bounds: LatLngBounds, options?: { padding?: [number, number]; maxZoom?: number }): this;
      getBounds(): LatLngBounds;
    }
    interface PathStyle {
      radius?: number;
      color?: string;
      weight?: number;
      fillColor?: string;
      fillOpacity?: number;
    }
  }

  const L: {
    map(element: HTMLElement, options?: { preferCanvas?: boolean; minZoom?: number; maxZoom?: number }): L.Map;
    tileLayer(url: string, options?: { maxZoom?: number; attribution?: string }): L.Layer;
    circleMarker(at: [number, number], style?: L.PathStyle): L.CircleMarker;
    featureGroup(layers?: L.Layer[]): L.FeatureGroup;
    geoJSON(geometry: unknown, options?: { style?: L.PathStyle }): L.FeatureGroup;
    latLngBounds(points: L.LatLng[]): L.LatLngBounds;
    /** Present when Leaflet.markercluster is loaded. */
    markerClusterGroup?: (options?: { chunkedLoading?: boolean }) => L.MarkerClusterGroup;
  };
}
