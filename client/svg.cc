#include "client/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace wayfinder::client {
namespace {

// A number as short as it can be without losing what a drawing needs.
std::string N(double v) {
  if (std::abs(v) < 5e-7) return "0";
  std::string s = absl::StrFormat("%.6g", v);
  return s;
}

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Rectangles covering the cells for which `in(x, y)` holds: runs in a row,
// extended down while the next row has the same run. Appended to `d` as
// path commands.
template <typename In>
void MergedCells(uint32_t w, uint32_t h, In in, std::string* d) {
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> open;  // run -> first row
  auto emit = [&](uint32_t x0, uint32_t x1, uint32_t y0, uint32_t y1) {
    absl::StrAppend(d, "M", x0, " ", y0, "h", x1 - x0, "v", y1 - y0, "h-", x1 - x0, "z");
  };
  for (uint32_t y = 0; y <= h; ++y) {
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> next;
    if (y < h) {
      for (uint32_t x = 0; x < w;) {
        if (!in(x, y)) {
          ++x;
          continue;
        }
        uint32_t e = x;
        while (e < w && in(e, y)) ++e;
        auto it = open.find({x, e});
        next[{x, e}] = it != open.end() ? it->second : y;
        if (it != open.end()) open.erase(it);
        x = e;
      }
    }
    for (const auto& [run, y0] : open) emit(run.first, run.second, y0, y);
    open = std::move(next);
  }
}

// The hexagon of cell (col, row) (see HexSource): top and bottom sides at
// the centre -+ 0.5, side corners 0.625 out.
void HexCell(uint32_t col, uint32_t row, std::string* d) {
  const double cx = col + 0.5, cy = row + 0.5 + ((col & 1) != 0 ? 0.5 : 0.0);
  absl::StrAppend(d, "M", N(cx - 0.375), " ", N(cy - 0.5), "h.75l.25 .5l-.25 .5h-.75l-.25-.5z");
}

// A round length (1, 2 or 5 times a power of ten) near `about`.
double RoundLength(double about) {
  const double p = std::pow(10.0, std::floor(std::log10(about)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * p >= about * 0.7) return m * p;
  }
  return 10 * p;
}

// A colour per area id (the same id, the same colour in every drawing).
std::string AreaColour(uint32_t id) {
  static constexpr const char* kPalette[] = {"#a5d6a7", "#90caf9", "#ffcc80", "#ce93d8",
                                             "#80cbc4", "#ef9a9a", "#fff59d", "#bcaaa4"};
  return kPalette[id % 8];
}

// Area polygons, filled by id, half transparent over the map.
void AppendAreas(const std::vector<v1::Area>& areas, double u, std::string* svg) {
  for (const v1::Area& a : areas) {
    std::string pts;
    for (const auto& p : a.polygon().points()) absl::StrAppend(&pts, N(p.x()), ",", N(p.y()), " ");
    absl::StrAppend(svg, "<polygon class=\"area\" data-area=\"", a.id(), "\" fill=\"",
                    AreaColour(a.id()), "\" fill-opacity=\"0.6\" stroke=\"#555\" stroke-width=\"",
                    N(0.5 * u), "\" points=\"", pts, "\"/>\n");
  }
}

// An arrow head at (tx, ty) pointing along the unit (dx, dy), as path data.
std::string Head(double tx, double ty, double dx, double dy, double len) {
  return absl::StrCat("M", N(tx - len * (dx - 0.5 * dy)), " ", N(ty - len * (dy + 0.5 * dx)), "L",
                      N(tx), " ", N(ty), "L", N(tx - len * (dx + 0.5 * dy)), " ",
                      N(ty - len * (dy - 0.5 * dx)));
}

// Links: a line start -> end with a head at the end, and at the start too
// when the link goes both ways.
void AppendLinks(const std::vector<v1::Link>& links, double u, std::string* svg) {
  for (const v1::Link& l : links) {
    const double x0 = l.start().x(), y0 = l.start().y(), x1 = l.end().x(), y1 = l.end().y();
    const double len = std::hypot(x1 - x0, y1 - y0);
    std::string d = absl::StrCat("M", N(x0), " ", N(y0), "L", N(x1), " ", N(y1));
    if (len > 0) {
      const double dx = (x1 - x0) / len, dy = (y1 - y0) / len;
      absl::StrAppend(&d, Head(x1, y1, dx, dy, 8 * u));
      if (l.bidirectional()) absl::StrAppend(&d, Head(x0, y0, -dx, -dy, 8 * u));
    }
    absl::StrAppend(svg, "<path class=\"link\" data-link=\"", Escape(l.id()),
                    "\" fill=\"none\" stroke=\"#1565c0\" stroke-width=\"", N(2 * u),
                    "\" stroke-dasharray=\"", N(6 * u), " ", N(3 * u), "\" d=\"", d, "\"/>\n");
  }
}

// Rays, nearest queries and random points, over everything else.
void AppendQueries(const RenderInput& input, double u, std::string* svg) {
  for (const RenderInput::Ray& r : input.rays) {
    const v1::RaycastResponse& a = r.response;
    const double x0 = r.start.x(), y0 = r.start.y();
    // The segment asked, thin; the part walked, thick (to the hit or end).
    const double hx = a.hit() ? a.hit_point().x() : r.end.x();
    const double hy = a.hit() ? a.hit_point().y() : r.end.y();
    absl::StrAppend(svg, "<path class=\"ray\" fill=\"none\" stroke=\"#00838f\" stroke-width=\"",
                    N(u), "\" stroke-dasharray=\"", N(3 * u), " ", N(3 * u), "\" d=\"M", N(x0),
                    " ", N(y0), "L", N(r.end.x()), " ", N(r.end.y()), "\"/>\n");
    absl::StrAppend(svg, "<path class=\"ray-walk\" fill=\"none\" stroke=\"#00838f\" ",
                    "stroke-width=\"", N(2.5 * u), "\" d=\"M", N(x0), " ", N(y0), "L", N(hx), " ",
                    N(hy), "\"/>\n");
    if (!a.hit()) continue;
    // A cross at the hit point and the normal as an arrow 16 px long.
    const double c = 4 * u, nl = 16 * u;
    const double nx = a.normal().x(), ny = a.normal().y();
    std::string d = absl::StrCat("M", N(hx - c), " ", N(hy - c), "l", N(2 * c), " ", N(2 * c),
                                 "M", N(hx - c), " ", N(hy + c), "l", N(2 * c), " ", N(-2 * c));
    absl::StrAppend(svg, "<path class=\"ray-hit\" fill=\"none\" stroke=\"#c62828\" ",
                    "stroke-width=\"", N(2 * u), "\" d=\"", d, "\"/>\n");
    if (nx != 0 || ny != 0) {
      const double tx = hx + nx * nl, ty = hy + ny * nl;
      absl::StrAppend(svg, "<path class=\"ray-normal\" fill=\"none\" stroke=\"#c62828\" ",
                      "stroke-width=\"", N(1.5 * u), "\" d=\"M", N(hx), " ", N(hy), "L", N(tx),
                      " ", N(ty), Head(tx, ty, nx, ny, 5 * u), "\"/>\n");
    }
  }
  for (const RenderInput::Nearest& q : input.nearest) {
    const double px = q.point.x(), py = q.point.y();
    absl::StrAppend(svg, "<circle class=\"nearest-query\" cx=\"", N(px), "\" cy=\"", N(py),
                    "\" r=\"", N(3 * u), "\" fill=\"none\" stroke=\"#ef6c00\" stroke-width=\"",
                    N(1.5 * u), "\"/>\n");
    if (q.response.found()) {
      const double ax = q.response.point().x(), ay = q.response.point().y();
      absl::StrAppend(svg, "<path class=\"nearest-line\" stroke=\"#ef6c00\" stroke-width=\"",
                      N(u), "\" d=\"M", N(px), " ", N(py), "L", N(ax), " ", N(ay), "\"/>\n",
                      "<circle class=\"nearest\" cx=\"", N(ax), "\" cy=\"", N(ay), "\" r=\"",
                      N(3 * u), "\" fill=\"#ef6c00\"/>\n");
    } else if (q.max_distance > 0 && q.max_distance < 1e8) {
      absl::StrAppend(svg, "<circle class=\"nearest-none\" cx=\"", N(px), "\" cy=\"", N(py),
                      "\" r=\"", N(q.max_distance), "\" fill=\"none\" stroke=\"#ef6c00\" ",
                      "stroke-dasharray=\"", N(3 * u), " ", N(3 * u), "\" stroke-width=\"", N(u),
                      "\"/>\n");
    }
  }
  if (!input.random_points.empty()) {
    std::string dots;
    for (const v1::Point& p : input.random_points) {
      absl::StrAppend(&dots, "M", N(p.x() - 1.5 * u), " ", N(p.y()), "a", N(1.5 * u), " ",
                      N(1.5 * u), " 0 1 0 ", N(3 * u), " 0a", N(1.5 * u), " ", N(1.5 * u),
                      " 0 1 0 ", N(-3 * u), " 0");
    }
    absl::StrAppend(svg, "<path class=\"random-points\" fill=\"#2e7d32\" d=\"", dots, "\"/>\n");
  }
}

}  // namespace

std::string RenderSvg(const RenderInput& input, const RenderOptions& options) {
  const v1::GraphGeometry& g = *input.geometry;
  const double W = std::max(g.width(), 1e-9), H = std::max(g.height(), 1e-9);
  const double scale = options.size_px / std::max(W, H);  // px per world unit
  const double u = 1 / scale;                             // world units per px
  const double legend_px = 56;
  const double px_w = W * scale, px_h = H * scale + legend_px;
  std::string svg;
  absl::StrAppend(&svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", N(px_w),
                  "\" height=\"", N(px_h), "\" viewBox=\"0 0 ", N(W), " ", N(H + legend_px * u),
                  "\">\n");
  absl::StrAppend(&svg, "<title>", Escape(g.map()), " (", v1::GraphKind_Name(g.graph()),
                  ")</title>\n");

  // The map.
  const bool hex = g.graph() == v1::HEX;
  const bool polygon_map = g.walkable_size() > 0;
  absl::StrAppend(&svg, "<rect x=\"0\" y=\"0\" width=\"", N(W), "\" height=\"", N(H),
                  "\" fill=\"", polygon_map ? "#9e9e9e" : "#ffffff", "\"/>\n");
  if (polygon_map) {
    std::string d;
    for (const auto& poly : g.walkable()) {
      for (int i = 0; i < poly.points_size(); ++i) {
        absl::StrAppend(&d, i == 0 ? "M" : "L", N(poly.points(i).x()), " ",
                        N(poly.points(i).y()));
      }
      d += "z";
    }
    absl::StrAppend(&svg, "<path fill=\"#ffffff\" fill-rule=\"nonzero\" d=\"", d, "\"/>\n");
    d.clear();
    for (const auto& poly : g.obstacles()) {
      for (int i = 0; i < poly.points_size(); ++i) {
        absl::StrAppend(&d, i == 0 ? "M" : "L", N(poly.points(i).x()), " ",
                        N(poly.points(i).y()));
      }
      d += "z";
    }
    absl::StrAppend(&svg, "<path fill=\"#616161\" fill-rule=\"nonzero\" d=\"", d, "\"/>\n");
  }
  const uint32_t cw = g.cells_width(), ch = g.cells_height();
  if (cw > 0 && g.cells().size() == size_t{cw} * ch) {
    auto cell = [&](uint32_t x, uint32_t y) {
      return static_cast<uint8_t>(g.cells()[size_t{y} * cw + x]);
    };
    std::string blocked, costly;
    if (hex) {
      for (uint32_t y = 0; y < ch; ++y) {
        for (uint32_t x = 0; x < cw; ++x) {
          if (cell(x, y) == 255) HexCell(x, y, &blocked);
        }
      }
    } else {
      MergedCells(cw, ch, [&](uint32_t x, uint32_t y) { return cell(x, y) == 255; }, &blocked);
      MergedCells(
          cw, ch,
          [&](uint32_t x, uint32_t y) {
            const uint8_t c = cell(x, y);
            return c > 1 && c < 255;
          },
          &costly);
    }
    if (!costly.empty()) {
      absl::StrAppend(&svg, "<path fill=\"#ffe0b2\" d=\"", costly, "\"/>\n");
    }
    absl::StrAppend(&svg, "<path fill=\"#424242\" d=\"", blocked, "\"/>\n");
    if (hex && options.portals && size_t{cw} * ch <= 20000) {
      std::string outline;
      for (uint32_t y = 0; y < ch; ++y) {
        for (uint32_t x = 0; x < cw; ++x) {
          if (cell(x, y) != 255) HexCell(x, y, &outline);
        }
      }
      absl::StrAppend(&svg, "<path fill=\"none\" stroke=\"#b0bec5\" stroke-width=\"", N(u),
                      "\" d=\"", outline, "\"/>\n");
    }
  }

  AppendAreas(input.areas, u, &svg);

  // The graph.
  if (g.leaves_size() > 0) {
    std::string d;
    for (const auto& r : g.leaves()) {
      absl::StrAppend(&d, "M", N(r.x()), " ", N(r.y()), "h", N(r.width()), "v", N(r.height()),
                      "h", N(-r.width()), "z");
    }
    absl::StrAppend(&svg, "<path fill=\"#e3f2fd\" stroke=\"#1e88e5\" stroke-width=\"", N(u),
                    "\" d=\"", d, "\"/>\n");
    if (options.portals && g.leaves_size() <= options.max_portal_leaves) {
      d.clear();
      for (const auto& s : g.portals()) {
        absl::StrAppend(&d, "M", N(s.a().x()), " ", N(s.a().y()), "L", N(s.b().x()), " ",
                        N(s.b().y()));
      }
      absl::StrAppend(&svg, "<path fill=\"none\" stroke=\"#43a047\" stroke-width=\"", N(2 * u),
                      "\" d=\"", d, "\"/>\n");
    }
  }
  if (g.polygons_size() > 0) {
    std::string d;
    for (const auto& poly : g.polygons()) {
      for (int i = 0; i < poly.points_size(); ++i) {
        absl::StrAppend(&d, i == 0 ? "M" : "L", N(poly.points(i).x()), " ",
                        N(poly.points(i).y()));
      }
      d += "z";
    }
    absl::StrAppend(&svg, "<path fill=\"#e3f2fd\" fill-opacity=\"0.7\" stroke=\"#1e88e5\" ",
                    "stroke-width=\"", N(u), "\" stroke-linejoin=\"round\" d=\"", d, "\"/>\n");
  }

  // Flow-field arrows, on a lattice.
  if (input.flow != nullptr) {
    const v1::FlowField& f = *input.flow;
    const uint32_t fw = f.width(), fh = f.height();
    const uint32_t step =
        std::max<uint32_t>(1, (std::max(fw, fh) + options.max_arrows_per_side - 1) /
                                  static_cast<uint32_t>(options.max_arrows_per_side));
    std::string d, goals;
    const bool hex_field = f.graph() == v1::HEX;
    static constexpr int kDx[8] = {1, 1, 0, -1, -1, -1, 0, 1};
    static constexpr int kDy[8] = {0, 1, 1, 1, 0, -1, -1, -1};
    // Hex: unit vectors of the six directions (N, NE, SE, S, SW, NW).
    static constexpr double kHx[6] = {0, 0.894, 0.894, 0, -0.894, -0.894};
    static constexpr double kHy[6] = {-1, -0.447, 0.447, 1, 0.447, -0.447};
    for (uint32_t y = step / 2; y < fh; y += step) {
      for (uint32_t x = step / 2; x < fw; x += step) {
        const uint8_t code = static_cast<uint8_t>(f.directions()[size_t{y} * fw + x]);
        const uint32_t cx = x + f.x(), cy = y + f.y();
        const double px = cx + 0.5, py = cy + 0.5 + (hex_field && (cx & 1) ? 0.5 : 0.0);
        if (code == 254) {
          absl::StrAppend(&goals, "M", N(px - 0.4 * step), " ", N(py), "h", N(0.8 * step));
          continue;
        }
        double dx, dy;
        if (hex_field && code < 6) {
          dx = kHx[code];
          dy = kHy[code];
        } else if (!hex_field && code < 8) {
          const double len = std::hypot(kDx[code], kDy[code]);
          dx = kDx[code] / len;
          dy = kDy[code] / len;
        } else {
          continue;
        }
        const double l = 0.7 * step;
        const double tx = px + dx * l / 2, ty = py + dy * l / 2;
        absl::StrAppend(&d, "M", N(px - dx * l / 2), " ", N(py - dy * l / 2), "L", N(tx), " ",
                        N(ty));
        // Head: two short strokes back from the tip.
        const double hl = 0.3 * step;
        absl::StrAppend(&d, "M", N(tx - hl * (dx - 0.6 * dy)), " ", N(ty - hl * (dy + 0.6 * dx)),
                        "L", N(tx), " ", N(ty), "L", N(tx - hl * (dx + 0.6 * dy)), " ",
                        N(ty - hl * (dy - 0.6 * dx)));
      }
    }
    absl::StrAppend(&svg, "<path fill=\"none\" stroke=\"#6a1b9a\" stroke-width=\"",
                    N(1.2 * u), "\" d=\"", d, "\"/>\n");
    if (!goals.empty()) {
      absl::StrAppend(&svg, "<path fill=\"none\" stroke=\"#d81b60\" stroke-width=\"", N(3 * u),
                      "\" d=\"", goals, "\"/>\n");
    }
  }

  AppendLinks(input.links, u, &svg);

  // Paths.
  static constexpr const char* kColours[] = {"#e53935", "#fb8c00", "#8e24aa", "#00897b"};
  for (size_t i = 0; i < input.paths.size(); ++i) {
    const v1::FindPathResponse& p = input.paths[i];
    if (p.waypoints_size() == 0) continue;
    const char* colour = kColours[i % 4];
    std::string pts;
    for (const auto& w : p.waypoints()) absl::StrAppend(&pts, N(w.x()), ",", N(w.y()), " ");
    absl::StrAppend(&svg, "<polyline fill=\"none\" stroke=\"", colour, "\" stroke-width=\"",
                    N(2.5 * u), "\" stroke-linejoin=\"round\" points=\"", pts, "\"/>\n");
    std::string dots;
    for (const auto& w : p.waypoints()) {
      absl::StrAppend(&dots, "M", N(w.x() - 2 * u), " ", N(w.y()), "a", N(2 * u), " ", N(2 * u),
                      " 0 1 0 ", N(4 * u), " 0a", N(2 * u), " ", N(2 * u), " 0 1 0 ", N(-4 * u),
                      " 0");
    }
    absl::StrAppend(&svg, "<path fill=\"", colour, "\" d=\"", dots, "\"/>\n");
  }

  AppendQueries(input, u, &svg);

  // Legend: what is drawn, and a scale bar.
  const double ly = H + 18 * u, font = 12 * u;
  std::string what = absl::StrCat(g.map(), " v", g.map_version(), ", ",
                                  v1::GraphKind_Name(g.graph()));
  if (g.leaves_size() > 0) absl::StrAppend(&what, ": ", g.leaves_size(), " leaves");
  if (g.polygons_size() > 0) {
    absl::StrAppend(&what, ": ", g.polygons_size(), " polygons, agent radius ",
                    N(g.agent_radius()));
  }
  for (const auto& p : input.paths) {
    absl::StrAppend(&what, "; path ", N(p.length()), " (",
                    v1::PathStatus_Name(p.status()), ")");
  }
  if (input.flow != nullptr) {
    absl::StrAppend(&what, "; flow field, ", input.flow->stats().reachable_cells(),
                    " cells reach a goal");
  }
  if (!input.areas.empty()) absl::StrAppend(&what, "; ", input.areas.size(), " areas");
  if (!input.links.empty()) absl::StrAppend(&what, "; ", input.links.size(), " links");
  if (!input.rays.empty()) absl::StrAppend(&what, "; ", input.rays.size(), " rays");
  if (!input.nearest.empty()) {
    absl::StrAppend(&what, "; ", input.nearest.size(), " nearest queries");
  }
  if (!input.random_points.empty()) {
    absl::StrAppend(&what, "; ", input.random_points.size(), " random points");
  }
  absl::StrAppend(&svg, "<text x=\"", N(4 * u), "\" y=\"", N(ly), "\" font-family=\"sans-serif\" ",
                  "font-size=\"", N(font), "\">", Escape(what), "</text>\n");
  const double bar = RoundLength(100 * u);
  const double by = H + 40 * u;
  absl::StrAppend(&svg, "<path stroke=\"#000\" stroke-width=\"", N(2 * u), "\" d=\"M", N(4 * u),
                  " ", N(by), "h", N(bar), "\"/>\n", "<text x=\"", N(8 * u + bar), "\" y=\"",
                  N(by + 4 * u), "\" font-family=\"sans-serif\" font-size=\"", N(font), "\">",
                  N(bar), " units</text>\n");
  svg += "</svg>\n";
  return svg;
}

}  // namespace wayfinder::client
