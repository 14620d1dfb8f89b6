//! Interconnect topologies between clusters (or dies): the directed links, the route a packet
//! takes, and how much of a collective each link carries.
//!
//! - `crossbar`: one shared resource; every transfer crosses it once.
//! - `ring`: k unidirectional links, cluster i to i+1 (REED's C2C ring); a packet from i to j
//!   crosses `(j - i) mod k` links.
//! - `mesh`: a dx x dy 2D mesh with a link in each direction between neighbours and XY
//!   routing, X first (CiFHER's NoP, cifher.md VI-A). Cluster c sits at (c mod dx, c / dx).

use crate::machine::Topology;

/// The links of a topology and its routes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Links {
    pub topology: Topology,
    pub clusters: usize,
    /// Mesh width (clusters per row); unused otherwise.
    pub dx: usize,
    /// Directed links as (from, to); a crossbar has the one pseudo-link (0, 0).
    pub edges: Vec<(usize, usize)>,
}

impl Links {
    /// The links of `topology` over `clusters` (a mesh needs `dx` dividing `clusters`).
    pub fn new(topology: Topology, clusters: usize, dx: usize) -> Self {
        let k = clusters.max(1);
        let edges = match topology {
            Topology::Crossbar => vec![(0, 0)],
            Topology::Ring => (0..k).map(|i| (i, (i + 1) % k)).collect(),
            Topology::Mesh => {
                let dx = dx.max(1);
                let dy = k / dx;
                let mut e = Vec::new();
                for y in 0..dy {
                    for x in 0..dx {
                        let c = y * dx + x;
                        if x + 1 < dx {
                            e.push((c, c + 1));
                            e.push((c + 1, c));
                        }
                        if y + 1 < dy {
                            e.push((c, c + dx));
                            e.push((c + dx, c));
                        }
                    }
                }
                e
            }
        };
        Self {
            topology,
            clusters: k,
            dx,
            edges,
        }
    }

    /// Number of link resources.
    pub fn len(&self) -> usize {
        self.edges.len()
    }

    /// Whether there are none (a single-cluster mesh).
    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }

    fn edge(&self, a: usize, b: usize) -> usize {
        self.edges
            .iter()
            .position(|&e| e == (a, b))
            .expect("routes use existing links")
    }

    /// The links a packet from `src` to `dst` crosses, in order.
    pub fn route(&self, src: usize, dst: usize) -> Vec<usize> {
        if src == dst {
            return Vec::new();
        }
        match self.topology {
            Topology::Crossbar => vec![0],
            Topology::Ring => {
                let k = self.clusters;
                let mut out = Vec::new();
                let mut c = src;
                while c != dst {
                    out.push(c);
                    c = (c + 1) % k;
                }
                out
            }
            Topology::Mesh => {
                let dx = self.dx.max(1);
                let (mut x, mut y) = (src % dx, src / dx);
                let (tx, ty) = (dst % dx, dst / dx);
                let mut out = Vec::new();
                while x != tx {
                    let nx = if tx > x { x + 1 } else { x - 1 };
                    out.push(self.edge(y * dx + x, y * dx + nx));
                    x = nx;
                }
                while y != ty {
                    let ny = if ty > y { y + 1 } else { y - 1 };
                    out.push(self.edge(y * dx + x, ny * dx + x));
                    y = ny;
                }
                out
            }
        }
    }

    /// Bytes on each link when every cluster sends `per_pair` bytes to every other (an
    /// all-to-all re-distribution).
    pub fn all_to_all(&self, per_pair: f64) -> Vec<f64> {
        let mut load = vec![0.0; self.len()];
        for s in 0..self.clusters {
            for d in 0..self.clusters {
                for l in self.route(s, d) {
                    load[l] += per_pair;
                }
            }
        }
        load
    }

    /// Bytes on each link when cluster `src` multicasts `bytes` to every other cluster along
    /// its routes (a link shared by several routes carries the data once).
    pub fn broadcast(&self, src: usize, bytes: f64) -> Vec<f64> {
        let mut used = vec![false; self.len()];
        for d in 0..self.clusters {
            for l in self.route(src, d) {
                used[l] = true;
            }
        }
        used.iter().map(|&u| if u { bytes } else { 0.0 }).collect()
    }

    /// Bytes on each link when every cluster multicasts its `per_cluster` bytes to every
    /// other (an all-gather).
    pub fn all_gather(&self, per_cluster: f64) -> Vec<f64> {
        let mut load = vec![0.0; self.len()];
        for s in 0..self.clusters {
            for (l, b) in self.broadcast(s, per_cluster).into_iter().enumerate() {
                load[l] += b;
            }
        }
        load
    }
}

impl Links {
    /// Directed links into cluster `v`.
    fn links_into(&self, v: usize) -> Vec<usize> {
        (0..self.len()).filter(|&l| self.edges[l].1 == v).collect()
    }

    /// A hop-by-hop all-gather: in each hop every directed link carries at most one block
    /// (conflict-free) from a cluster that holds it to one that lacks it; blocks that only
    /// one neighbour can supply go first, then rarer blocks. Returns, per hop, the
    /// (link, block) transfers. On a 4 x 4 mesh it finishes in 8 hops, the bound set by a
    /// corner's two incoming links and 15 missing blocks (h3.md 4.2's conflict-free 8-hop
    /// broadcast).
    pub fn all_gather_schedule(&self) -> Vec<Vec<(usize, usize)>> {
        let k = self.clusters;
        let mut have: Vec<Vec<bool>> = (0..k).map(|i| (0..k).map(|b| b == i).collect()).collect();
        let mut hops = Vec::new();
        let ins: Vec<Vec<usize>> = (0..k).map(|v| self.links_into(v)).collect();
        while have.iter().any(|h| h.iter().any(|x| !x)) && hops.len() < 4 * k {
            let count: Vec<usize> = (0..k)
                .map(|b| have.iter().filter(|h| h[b]).count())
                .collect();
            let mut order: Vec<usize> = (0..k).collect();
            order.sort_by_key(|&v| (have[v].iter().filter(|x| **x).count(), ins[v].len(), v));
            let mut hop = Vec::new();
            let mut got = vec![vec![false; k]; k];
            for &v in &order {
                let mut links = ins[v].clone();
                let missing = |u: usize| (0..k).filter(|&b| have[u][b] && !have[v][b]).count();
                links.sort_by_key(|&l| (missing(self.edges[l].0), l));
                for l in links {
                    let u = self.edges[l].0;
                    let best = (0..k)
                        .filter(|&b| have[u][b] && !have[v][b] && !got[v][b])
                        .min_by_key(|&b| {
                            let suppliers =
                                ins[v].iter().filter(|&&i| have[self.edges[i].0][b]).count();
                            (suppliers, count[b], b)
                        });
                    if let Some(b) = best {
                        got[v][b] = true;
                        hop.push((l, b));
                    }
                }
            }
            if hop.is_empty() {
                break;
            }
            for &(l, b) in &hop {
                have[self.edges[l].1][b] = true;
            }
            hops.push(hop);
        }
        hops
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_routes_go_one_way() {
        let r = Links::new(Topology::Ring, 4, 0);
        assert_eq!(r.len(), 4);
        assert_eq!(r.route(0, 3), vec![0, 1, 2]);
        assert_eq!(r.route(3, 1), vec![3, 0]);
        // All-to-all of 1 byte per pair: each link carries 1 + 2 + 3 = 6 pair-hops / ...
        // by symmetry every link carries the same: total hops 4 * (1 + 2 + 3) = 24 over 4.
        assert_eq!(r.all_to_all(1.0), vec![6.0; 4]);
        // All-gather of 1 byte per cluster: every link carries 3 (k - 1) bytes.
        assert_eq!(r.all_gather(1.0), vec![3.0; 4]);
    }

    #[test]
    fn mesh_routes_are_xy() {
        // 4 x 2 mesh: cluster 0 at (0,0), 7 at (3,1).
        let m = Links::new(Topology::Mesh, 8, 4);
        assert_eq!(m.len(), 2 * 3 * 2 + 2 * 4);
        let r = m.route(0, 7);
        let hops: Vec<(usize, usize)> = r.iter().map(|&l| m.edges[l]).collect();
        assert_eq!(
            hops,
            vec![(0, 1), (1, 2), (2, 3), (3, 7)],
            "X first, then Y"
        );
        // 2 x 2 all-to-all, one byte per pair: each of the 8 directed links carries 2
        // (one straight pair and one pair whose X leg or Y leg uses it).
        let m2 = Links::new(Topology::Mesh, 4, 2);
        assert_eq!(m2.all_to_all(1.0), vec![2.0; 8]);
        // Broadcast from a corner of a 2 x 2 mesh: a tree of 3 links.
        let b = m2.broadcast(0, 5.0);
        assert_eq!(b.iter().filter(|&&x| x > 0.0).count(), 3);
        assert_eq!(b.iter().sum::<f64>(), 15.0);
    }

    /// h3.md 4.2: on 4 x 4 tiles the broadcast of every tile's block to every tile finishes
    /// in 8 hops with no link carrying two blocks in a hop.
    #[test]
    fn mesh_all_gather_takes_eight_conflict_free_hops_on_4x4() {
        let m = Links::new(Topology::Mesh, 16, 4);
        let hops = m.all_gather_schedule();
        assert_eq!(hops.len(), 8);
        let mut have: Vec<Vec<bool>> = (0..16).map(|i| (0..16).map(|b| b == i).collect()).collect();
        for hop in &hops {
            let mut used = vec![false; m.len()];
            for &(l, b) in hop {
                assert!(!used[l], "link {l} carries two blocks in one hop");
                used[l] = true;
                assert!(have[m.edges[l].0][b], "the sender holds the block");
            }
            for &(l, b) in hop {
                have[m.edges[l].1][b] = true;
            }
        }
        assert!(
            have.iter().all(|h| h.iter().all(|x| *x)),
            "everyone has everything"
        );
        // 2 x 2: 3 missing blocks over 2 incoming links: 2 hops.
        assert_eq!(
            Links::new(Topology::Mesh, 4, 2).all_gather_schedule().len(),
            2
        );
    }

    #[test]
    fn crossbar_is_one_resource() {
        let c = Links::new(Topology::Crossbar, 4, 0);
        assert_eq!(c.len(), 1);
        assert_eq!(c.route(1, 2), vec![0]);
        assert_eq!(c.all_to_all(1.0), vec![12.0]);
    }
}
