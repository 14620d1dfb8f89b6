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
