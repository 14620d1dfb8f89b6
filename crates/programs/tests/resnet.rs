//! ResNet-20 (issue 21 item 1): the replica against the data's documented facts.

use tessera_programs::data::data_dir;
use tessera_programs::resnet::model::{images, Model};
use tessera_programs::resnet::replica::{app_relu, Activation};
use tessera_programs::resnet::replica_accuracy;

/// The float network and the AppReLU replica on the first 8 images: the float network's
/// predictions on them are 8 / 8 correct except where the data says otherwise, and AppReLU
/// agrees with it.
#[test]
fn replica_on_a_few_images() {
    let dir = data_dir(None);
    let model = Model::load(&dir).unwrap();
    let (imgs, labels) = images(&dir, 8).unwrap();
    let float = replica_accuracy(&model, &imgs, &labels, Activation::Relu).unwrap();
    let app = replica_accuracy(&model, &imgs, &labels, app_relu().unwrap()).unwrap();
    eprintln!("float {:?}\napp {:?}", float, app);
    assert_eq!(float.predictions, app.predictions);
}

/// All 932 images (README: the float network gets 854; acceptance: AppReLU at least 91 %).
#[test]
#[ignore = "about a minute: the whole 932-image set, twice"]
fn replica_accuracy_on_932_images() {
    let dir = data_dir(None);
    let model = Model::load(&dir).unwrap();
    let (imgs, labels) = images(&dir, 932).unwrap();
    let float = replica_accuracy(&model, &imgs, &labels, Activation::Relu).unwrap();
    let app = replica_accuracy(&model, &imgs, &labels, app_relu().unwrap()).unwrap();
    let agree = float
        .predictions
        .iter()
        .zip(&app.predictions)
        .filter(|(a, b)| a == b)
        .count();
    eprintln!(
        "float ReLU: {}/932, max |pre-activation| {:.2}; AppReLU: {}/932 ({:.2} %), max {:.2}; agreement {agree}/932",
        float.correct, float.max_pre_activation, app.correct, 100.0 * app.correct as f64 / 932.0, app.max_pre_activation
    );
    assert_eq!(float.correct, 854);
    assert!(app.correct as f64 >= 0.91 * 932.0);
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// The packed replica (multiplexed packing, MPConv, shortcuts, pooling, FC by diagonals, in
/// the clear) equals the tensor replica: the full network on two images in 2^14 slots, and a
/// reduced network (channels 2, 4, 8 on an 8 x 8 crop) in 256 slots.
#[test]
fn packed_replica_equals_the_tensor_replica() {
    use tessera_ckks::circuits::sign::CompositeSign;
    use tessera_programs::resnet::packed_forward;
    use tessera_programs::resnet::replica::{forward, image_tensor};
    let dir = data_dir(None);
    let model = Model::load(&dir).unwrap();
    let (imgs, _) = images(&dir, 2).unwrap();
    let sign = CompositeSign::lee_relu().unwrap();
    let act = app_relu().unwrap();
    for img in &imgs {
        let t = image_tensor(img, 32);
        let (want, _) = forward(&model, &t, act);
        let (got, rot) = packed_forward(&model, &t, 1 << 14, sign).unwrap();
        let d = max_diff(&got, &want);
        eprintln!(
            "full: max |packed - tensor| = {d:e}; {} rotation amounts",
            rot.len()
        );
        assert!(d < 1e-9, "{d}");
    }
    let small = model.reduced([2, 4, 8]).unwrap();
    for img in &imgs {
        let t = image_tensor(img, 8);
        let (want, _) = forward(&small, &t, act);
        let (got, rot) = packed_forward(&small, &t, 256, sign).unwrap();
        let d = max_diff(&got, &want);
        eprintln!(
            "reduced: max |packed - tensor| = {d:e}; {} rotation amounts",
            rot.len()
        );
        assert!(d < 1e-9, "{d}");
    }
}
