#ifndef WAYFINDER_CLIENT_SVG_H_
#define WAYFINDER_CLIENT_SVG_H_

#include <string>
#include <vector>

#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::client {

struct RenderOptions {
  // The drawing's longer side, pixels (world units are scaled to it).
  double size_px = 1024;
  // Flow-field arrows are drawn on a lattice of at most this many per side.
  int max_arrows_per_side = 64;
  // Draw quadtree portals (up to this many leaves: beyond, they would
  // only blacken the picture and bloat the file) and hex cell outlines
  // (small maps).
  bool portals = true;
  int max_portal_leaves = 20000;
};

// What to draw, bottom to top: the map (blocked cells merged into
// rectangles, or obstacle polygons), area polygons, the graph (quadtree
// leaves and portals, navmesh polygons), flow-field arrows, links, paths
// with their waypoints, rays, nearest queries, random points, and a legend
// with a scale bar.
struct RenderInput {
  const v1::GraphGeometry* geometry = nullptr;
  std::vector<v1::FindPathResponse> paths;
  const v1::FlowField* flow = nullptr;
  // Raycasts: the segment asked (start to end) and the answer: the walked
  // part, a cross at the hit point and the side's normal as a short arrow.
  struct Ray {
    v1::Point start, end;
    v1::RaycastResponse response;
  };
  std::vector<Ray> rays;
  // NearestPoint queries: the query point, a line to the answer, the
  // answer's dot (or a ring of the max distance when none was found).
  struct Nearest {
    v1::Point point;
    double max_distance = 0;
    v1::NearestPointResponse response;
  };
  std::vector<Nearest> nearest;
  // RandomPoints answers: small dots.
  std::vector<v1::Point> random_points;
  // The map's off-mesh links (arrows start -> end, a head at both ends when
  // bidirectional) and area polygons (filled, one colour per area id),
  // drawn under the paths.
  std::vector<v1::Link> links;
  std::vector<v1::Area> areas;
};

// A self-contained SVG document. Large maps stay light: blocked cells
// become one path of merged rectangles, leaves and polygons one path each,
// arrows are subsampled.
std::string RenderSvg(const RenderInput& input, const RenderOptions& options = {});

}  // namespace wayfinder::client

#endif  // WAYFINDER_CLIENT_SVG_H_
