/// The dashboard's page, served at `/` to a browser: placeholder.
enum DashboardPage {
    static let html = "<!doctype html><title>livemux</title>"
}
